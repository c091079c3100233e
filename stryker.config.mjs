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
  // Each mutant loads only the specs that import its file (jest --findRelatedTests), not every spec of the list:
  // module loading, not the tests, was most of a mutant's time.
  jest: { configFile: 'jest.mutation.config.js', enableFindRelatedTests: true },
  // Mutants that do not compile are discarded by the type checker before any test runs. It checks the program of
  // tsconfig.mutation.json (the core, what it imports, and its specs) rather than all of src/ and test/: a third
  // of the files, and the checker was the other half of a mutant's time.
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.mutation.json',
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  // The machine is shared: one test process.
  concurrency: 1,
  timeoutMS: 5000,
  mutate: [
    // Billing: what a request costs.
    'src/billing/cost.ts',
    // settlement() only: admission is exercised against Redis (test/e2e/redis-scripts, limits, capacity).
    'src/limits/limits.service.ts:147-162',
    // Security: who a token is, and what of a vendor's error reaches a client (keys scrubbed).
    'src/auth/credential.cache.ts',
    'src/providers/upstream-errors.ts',
    // Retry planning: which deployment, how often, how long to wait.
    'src/gateway/upstream-caller.ts',
    // Accounting: one usage record per request, batched and retried.
    'src/usage/usage-writer.ts',
    // Translation, every table both ways: stop reasons, usage, tool calls (parallel ones included), content.
    'src/providers/anthropic/anthropic.response.ts',
    'src/providers/anthropic/anthropic.stream.ts',
    'src/providers/gemini/gemini.response.ts',
    'src/providers/gemini/gemini.stream.ts',
    'src/endpoints/messages/chat-to-messages.ts',
    'src/endpoints/messages/messages-to-chat.ts',
    'src/endpoints/responses/responses-to-chat.ts',
    'src/endpoints/responses/chat-to-response.ts',
    // responseUsage() and statusOf(): the usage and finish_reason tables of the Responses translation.
    'src/endpoints/responses/response-object.ts:23-48',
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
