// @ts-check
// ESLint 9 flat config. Two jobs: typed linting of all TypeScript (floating promises, type-only imports), and the
// DETERMINISM BOUNDARY: workflow code and what it may import (src/domain, the search-attribute keys) must not
// reach Node built-ins, Temporal's client/worker/activity packages, the database or the model SDK, and may
// import activities as types only (for proxyActivities<typeof activities>).
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TS_FILES = ['**/*.ts'];
const BOUNDARY_FILES = [
  'workflows/**/*.ts',
  'src/domain/**/*.ts',
  'src/tools/**/*.ts',
  'src/server/search-attributes.ts',
  'src/policy/authorization.ts',
  'src/policy/evaluate.ts',
  'src/policy/policy-rules.ts',
  'src/policy/quota-window.ts',
  'src/policy/send-margin.ts',
  'lab/faults/workflow-hook.ts',
  'lab/faults/workflow-interceptors.ts',
  'lab/strategies/naive.ts',
  'lab/strategies/workflow-module.ts',
];

const nodeBuiltins = builtinModules.filter((m) => !m.startsWith('_'));
const builtinMessage = 'Workflow-side code is deterministic and bundled for the sandbox: no Node built-ins.';
const forbiddenPackages = [
  { name: '@temporalio/worker', message: 'Workers live outside workflow code.' },
  { name: '@temporalio/client', message: 'Clients live outside workflow code; use @temporalio/workflow.' },
  { name: '@temporalio/activity', message: 'Activity context is not available in workflow code.' },
  { name: 'better-sqlite3', message: 'I/O belongs in activities or services.' },
  { name: 'openai', message: 'Model calls belong in activities.' },
];

export default defineConfig(
  {
    ignores: [
      '**/node_modules/**',
      '.tools/**',
      '.data/**',
      'dist/**',
      'coverage/**',
      'lab/bench/results/**',
      'test/replay/histories/**',
    ],
  },
  {
    files: ['**/*.{js,cjs,mjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.{js,cjs}'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    files: TS_FILES,
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: BOUNDARY_FILES,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins.map((name) => ({ name, message: builtinMessage })), ...forbiddenPackages],
          patterns: [
            { group: ['node:*'], message: builtinMessage },
            { group: ['better-sqlite3/*', 'openai/*', '@temporalio/worker/*', '@temporalio/client/*'] },
            {
              regex: '(^|/)activities(/.*)?$',
              allowTypeImports: true,
              message: 'Import activities as types only (`import type`), then use proxyActivities.',
            },
            {
              // Every run evaluates the modules it imports: this one builds the policy schemas and parses the
              // default policy when evaluated. The rules workflow code needs are in policy-rules.ts.
              regex: '(^|/)policy/policy-format$',
              allowTypeImports: true,
              message: 'Import the policy format as types only; take the rules from policy-rules.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // PACKAGES BY ROLE: the runtime a user depends on (src/, workflows/, activities/) never reaches into the
    // simulated services, the lab, the CLI or the user projects under examples/; they depend on it, not the other
    // way round.
    files: ['src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts'],
    ignores: BOUNDARY_FILES.filter((f) => f.startsWith('lab/')),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(services|lab|cli|examples)(/|$)',
              message: 'The runtime does not import the services, the lab, the CLI or the examples (README, "Layout").',
            },
          ],
        },
      ],
    },
  },
  {
    // USER PROJECTS reach the runtime only through its package entries (ledgerloop, ledgerloop/workflow-tools,
    // ledgerloop/tool-registry, ledgerloop/services), so what they use is the public API.
    files: ['examples/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(src|workflows|activities|services|lab|cli)(/|$)',
              message: 'A user project imports the runtime by its package entries (examples/ticketing/README.md).',
            },
          ],
        },
      ],
    },
  },
);
