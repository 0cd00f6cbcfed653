#!/usr/bin/env node
'use strict';
/**
 * `npm run build` (and `prepack`): the package's JavaScript and declarations in dist/ (tsconfig.build.json), plus
 * the files the code reads at run time that are not modules (the console's static assets).
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');

fs.rmSync(DIST, { recursive: true, force: true });
const tsc = require.resolve('typescript/bin/tsc');
const built = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
if (built.status !== 0) {
  console.error(`build: tsc failed (${built.status ?? built.signal})`);
  process.exit(1);
}
fs.cpSync(path.join(ROOT, 'console', 'static'), path.join(DIST, 'console', 'static'), { recursive: true });
// The build follows imports from the entries only: nothing of the repository's examples or lab-only packages.
for (const stray of ['examples', 'packages', 'test']) {
  if (fs.existsSync(path.join(DIST, stray))) {
    console.error(`build: dist/${stray} was emitted; an entry imports it (tsconfig.build.json)`);
    process.exit(1);
  }
}
console.log(`build: ${path.relative(process.cwd(), DIST) || DIST} written`);
