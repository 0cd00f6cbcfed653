#!/usr/bin/env node
'use strict';
// The `ledgerloop` command. Installed from the package it runs the compiled CLI in dist/ with plain Node; in a
// clone of the repository (the TypeScript sources beside it) it runs them through the repository's loader
// (register.cjs), so there is no build step while developing.
const fs = require('node:fs');
const path = require('node:path');

const source = path.join(__dirname, '..', 'cli', 'main.ts');
if (fs.existsSync(source) && fs.existsSync(path.join(__dirname, 'register.cjs'))) {
  require('./register.cjs');
  require(source);
} else {
  require('../dist/cli/main.js');
}
