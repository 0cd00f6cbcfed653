#!/usr/bin/env node
'use strict';
// The `ledgerloop` command. Installed from the package it runs the compiled CLI in dist/ with plain Node; in a
// clone of the repository (the TypeScript sources beside it) it runs them through the repository's loader
// (register.cjs), so there is no build step while developing. LEDGERLOOP_RUN_FROM_DIST=1 runs dist/ even in a
// clone: what an installed project runs (the tests of a project linked to this checkout use it).
const fs = require('node:fs');
const path = require('node:path');

const source = path.join(__dirname, '..', 'cli', 'main.ts');
const fromDist = process.env.LEDGERLOOP_RUN_FROM_DIST === '1';
if (!fromDist && fs.existsSync(source) && fs.existsSync(path.join(__dirname, 'register.cjs'))) {
  require('./register.cjs');
  require(source);
} else {
  require('../dist/cli/main.js');
}
