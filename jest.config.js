// Three test tiers, each a jest project: unit (no server), integration (real Temporal dev server and real
// downstream processes), replay (checked-in histories). `npm test` starts the server and runs all three.
const transform = { '^.+\\.(t|j)s$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
const common = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'], slowTestThreshold: 60 },
    { ...common, displayName: 'replay', testMatch: ['<rootDir>/test/replay/**/*.test.ts'] },
  ],
};
