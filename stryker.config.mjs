// @ts-check
/**
 * `npm run test:mutation`: StrykerJS on the core, the code where a wrong line loses money or leaks a token (billing,
 * limit settlement, the credential cache, retry planning, the usage writer, the translation tables). It runs only
 * the fast unit specs of jest.mutation.config.js (in-memory fakes, no Redis), and is not part of `npm test`.
 * docs/testing.md has the score, how long a run takes, and every surviving mutant with why it survives.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  packageManager: 'npm',
  testRunner: 'jest',
  jest: { configFile: 'jest.mutation.config.js', enableFindRelatedTests: false },
  // Mutants that do not compile are discarded by the type checker before any test runs.
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  // The machine is shared: one test process.
  concurrency: 1,
  timeoutMS: 5000,
  mutate: [
    'src/billing/cost.ts',
    // settlement() only: admission is exercised against Redis (test/e2e/redis-scripts, limits, capacity).
    'src/limits/limits.service.ts:158-170',
    'src/auth/credential.cache.ts',
    'src/gateway/upstream-caller.ts',
    'src/usage/usage-writer.ts',
    // The translation tables and usage conversions; the block translators below them are covered by e2e tests.
    'src/providers/anthropic/anthropic.response.ts:1-47',
    'src/providers/gemini/gemini.response.ts:1-46',
    'src/endpoints/messages/chat-to-messages.ts:1-69',
  ],
  // Module-level constants (tables) are still mutated; `static` means code run once at load, checked by every test.
  ignoreStatic: false,
  // A later run re-tests only mutants whose code or covering tests changed (the file is not committed).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // The sandbox copies only what the unit specs and the type checker read (.cache is a symlink to shared models).
  ignorePatterns: [
    '.cache',
    'runtimes',
    'dist',
    'bench',
    'deploy',
    'docs',
    'coverage',
    'test/e2e',
    'test/fixtures',
  ],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
