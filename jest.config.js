// Five test tiers, each a jest project: unit (no server), workflow (time-skipping test server, stub activities), integration (real Temporal dev server and real
// downstream processes), replay (checked-in histories), browser (the Web UI in headless Chromium). `npm test`
// starts the server and runs all five.
const transform = { '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
// Packages that ship ES modules only, compiled to CommonJS like our own code (jest's module system does not load
// ESM from require()): jose (v6), and the AI SDK (`ai` 7, `@ai-sdk/*`) with its ESM-only dependencies.
// `zod/v4/locales/en.js`, which @ai-sdk/provider-utils imports by file, is ESM in an otherwise dual package.
const ESM_ONLY = ['jose', 'ai', '@ai-sdk', '@standard-schema', '@workflow', 'eventsource-parser', 'zod/v4'];
const transformIgnorePatterns = [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`];
// The package's own entries resolve to their sources here (as tsconfig.json's paths say), not to dist/.
const moduleNameMapper = {
  '^ledgerloop$': '<rootDir>/host/index.ts',
  '^ledgerloop/worker$': '<rootDir>/host/worker/index.ts',
  '^ledgerloop/ai-sdk/workflow$': '<rootDir>/workflows/ai-sdk/index.ts',
  '^ledgerloop/workflow-tools$': '<rootDir>/src/tools/index.ts',
  '^ledgerloop/tool-registry$': '<rootDir>/src/tools/registry-entry.ts',
  '^ledgerloop/services$': '<rootDir>/services/index.ts',
  '^ledgerloop/testing$': '<rootDir>/host/testing/index.ts',
  '^ledgerloop/codec$': '<rootDir>/host/codec/index.ts',
  '^ledgerloop/mcp$': '<rootDir>/host/mcp/index.ts',
  '^ledgerloop/openai-agents$': '<rootDir>/host/openai-agents/index.ts',
  '^ledgerloop/openai-agents/workflow$': '<rootDir>/workflows/openai-agents/index.ts',
};
const common = {
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns,
  moduleNameMapper,
  moduleFileExtensions: ['ts', 'js', 'json'],
};
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    // The call runner's paths on the time-skipping test server with stub activities: seconds, no processes.
    { ...common, displayName: 'workflow', testMatch: ['<rootDir>/test/workflow/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      slowTestThreshold: 60,
    },
    { ...common, displayName: 'replay', testMatch: ['<rootDir>/test/replay/**/*.test.ts'] },
    // Headless Chromium against a dev server with the Web UI that the test file starts itself.
    { ...common, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.test.ts'], slowTestThreshold: 90 },
  ],
};
