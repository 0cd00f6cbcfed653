// @ts-check
// ESLint 9 flat config. Three jobs: typed linting of all TypeScript (floating promises, type-only imports); the
// SANDBOX BOUNDARY, a folder rule: code in the sandbox folders (workflows/, src/domain/, src/tools/, src/policy/,
// and any workflows/ folder of the lab) runs in the workflow sandbox, so it must not reach Node built-ins,
// Temporal's client/worker/activity packages, the database or the model SDK, and imports activities as types only;
// and the LAYERS, read top to bottom: host/ (worker, client, project, testing, servers, the package entry) over
// activities/ and workflows/ over src/ (the core and its adapters), none importing a layer above it.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TS_FILES = ['**/*.ts'];
/** The folders whose code runs in the workflow sandbox. */
const SANDBOX = [
  'workflows/**/*.ts',
  'src/domain/**/*.ts',
  'src/tools/**/*.ts',
  'src/policy/**/*.ts',
  'lab/**/workflows/**/*.ts',
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

/**
 * One layer's rule: the runtime's files in `dir` import neither the layers named in `above` nor anything outside the
 * runtime (the simulated services, the lab, the CLI, the console, the examples). Tests, the lab and the CLI depend
 * on the runtime, not the other way round.
 */
function layer(dir, above, why) {
  const outside = ['services', 'lab', 'cli', 'console', 'examples'];
  return [
    {
      files: [`${dir}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                regex: `^(\\.\\./)+(${[...above, ...outside].join('|')})(/|$)`,
                message: `${why} (README, "Where everything else is"); the runtime does not import ${outside.join(', ')}.`,
              },
            ],
          },
        ],
      },
    },
  ];
}

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
    files: SANDBOX,
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
              regex: '(^|/)policy-format$',
              allowTypeImports: true,
              message: 'Import the policy format as types only; take the rules from policy-rules.ts.',
            },
          ],
        },
      ],
    },
  },
  ...layer('src', ['host', 'workflows', 'activities'], 'src/ is the bottom layer: the core and its adapters'),
  ...layer('workflows', ['host'], 'Workflows sit under host/: the worker loads them, never the other way round'),
  ...layer('activities', ['host', 'workflows'], 'Activities sit under host/ and beside workflows/'),
  ...layer('host', [], 'host/ is the top of the runtime'),
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
