//go:build tools

// The SQL schema tool is built from the same module graph as the server, so both come from one go.sum.
package main

import _ "go.temporal.io/server/cmd/tools/sql"
