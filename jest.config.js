/** Jest: unit tests (test/unit) and end-to-end tests (test/e2e) in one run. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // Type checking is done once by `tsc --noEmit` (npm run lint); here we only transpile.
  transform: {
    '^.+\\.ts$': 'ts-jest',
    // NestJS 12 and jose 6 ship ES modules only. Node loads them from our CommonJS build (require of ESM), but Jest's module
    // runtime cannot, so Jest alone gets them transpiled to CommonJS (cached after the first run).
    '^.+/node_modules/(@nestjs|jose|openid-client|oauth4webapi|oidc-provider)/.+\\.js$':
      '<rootDir>/test/support/esm-to-cjs.mjs',
    // The OTLP exporters' CommonJS loads node:http with a dynamic import(), which Jest's runtime refuses (Node does not).
    '^.+/node_modules/@opentelemetry/otlp-exporter-base/.+\\.cjs$': '<rootDir>/test/support/esm-to-cjs.mjs',
  },
  transformIgnorePatterns: [
    '/node_modules/(?!@nestjs/|jose/|openid-client/|oauth4webapi/|oidc-provider/|@opentelemetry/otlp-exporter-base/)',
  ],
  testTimeout: 30000,
  // Every exchange of a test gateway is checked against the vendors' published schemas (test/support/wire/).
  setupFilesAfterEnv: ['<rootDir>/test/support/wire/jest-setup.ts'],
  maxWorkers: 2,
};
