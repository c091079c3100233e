/**
 * Jest for mutation testing (stryker.config.mjs): only the fast unit specs of the core (billing, limit settlement,
 * the credential cache, upstream error mapping, retry planning, the usage writer, the translations), all on in-memory fakes: no
 * Redis, no HTTP, so each mutant runs in well under a second. Transpile only (isolatedModules): Stryker's
 * TypeScript checker rejects mutants that do not compile before any test runs.
 */
module.exports = {
  testEnvironment: 'node',
  rootDir: __dirname,
  // src and test/support too, though no spec is there: --findRelatedTests (stryker.config.mjs) follows imports only
  // through files inside the roots, so a spec that reaches a mutated file through a helper or another directory
  // (upstream-caller-retry-plan.spec through test/support/upstream-caller-fakes.ts) would not be run for it.
  roots: ['<rootDir>/test/unit', '<rootDir>/test/support', '<rootDir>/src'],
  testMatch: [
    '**/cost.spec.ts',
    '**/limits-service.spec.ts',
    '**/credential-cache.spec.ts',
    '**/upstream-caller.spec.ts',
    '**/usage-writer.spec.ts',
    '**/translation-tables.spec.ts',
    '**/upstream-errors.spec.ts',
    '**/adapter-key-scrubbing.spec.ts',
    '**/anthropic-translation.spec.ts',
    '**/gemini-translation.spec.ts',
    '**/messages-translation.spec.ts',
    '**/responses-translation.spec.ts',
    '**/upstream-caller-retry-plan.spec.ts',
  ],
  transform: {
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true }],
    // NestJS 12 is ES modules only: transpiled for Jest as in jest.config.js.
    '^.+/node_modules/@nestjs/.+\\.js$': '<rootDir>/test/support/esm-to-cjs.mjs',
  },
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/)'],
  testTimeout: 10000,
};
