#!/usr/bin/env node
// The `ledgerloop` command: runs the TypeScript CLI through tsx, so there is no separate build step.
require('tsx/cjs');
require('../cli/main.ts');
