/** @type {import('jest').Config} */
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  // The Temporal dev server, Postgres and the workers under test share two cores. Locally two
  // test files run at once; CI runs them one at a time so that no test's deadlines (10 s per
  // request, as in production) are measured on a machine starved by another file's load.
  maxWorkers: process.env.CI ? 1 : 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': swc },
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': swc },
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      // Every answer an API gives these tests is checked against its OpenAPI document.
      setupFilesAfterEnv: ['<rootDir>/test/support/conformance-setup.ts'],
      slowTestThreshold: 30,
    },
  ],
};
