// ESLint: typed rules so a forgotten `await` (a floating promise) fails CI.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'src/console/web/',
      '.cache/',
      'bench/peers/',
      'runtimes/',
      'node_modules/',
      'coverage/',
      'bench/results/',
      'reports/',
      '.stryker-tmp/',
      '*.js',
      '*.mjs',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  // Tests poke at arbitrary JSON bodies; `any` there is clearer than casts.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
);
