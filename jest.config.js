/** Jest: unit tests (test/unit) and end-to-end tests (test/e2e) in one run. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // Type checking is done once by `tsc --noEmit` (npm run lint); here we only transpile.
  transform: { '^.+\\.ts$': 'ts-jest' },
  testTimeout: 30000,
  // Every exchange of a test gateway is checked against the vendors' published schemas (test/support/wire/).
  setupFilesAfterEnv: ['<rootDir>/test/support/wire/jest-setup.ts'],
  maxWorkers: 2,
};
