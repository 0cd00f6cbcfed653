#!/usr/bin/env node
// The `ledgerloop` command: runs the TypeScript CLI through the repository's loader (register.cjs), so there is no
// separate build step.
require('./register.cjs');
require('../cli/main.ts');
