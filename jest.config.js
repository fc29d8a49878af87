/** @type {import('jest').Config} */
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  // Three test files at once on the two cores the suite is sized for (CI's too): most files wait
  // on timers, Temporal and Postgres far more than they compute, and with two at once the two
  // cores were idle a quarter of the time (docs/testing.md, "Time"). The files that race
  // production's deadlines (10 s per request) on purpose say `@runs-alone` in their first
  // comment, and the runner gives each the machine to itself (test/support/tiered-runner.ts).
  // `--runInBand` runs every file one at a time.
  maxWorkers: 3,
  // The longest files first (test/durations.json where jest has no cache of past runs).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      runner: '<rootDir>/test/support/tiered-runner.ts',
      transform: { '^.+\\.ts$': swc },
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      runner: '<rootDir>/test/support/tiered-runner.ts',
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
