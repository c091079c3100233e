// The admin console's build: Preact pages and uPlot charts bundled into dist/console-web (served at /console by
// src/console/console-static.ts). Run by `npm run build`; no dev server is needed to use it.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // Preact's automatic JSX runtime (no @preact/preset-vite: it would pull Babel in for nothing).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../../../dist/console-web', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles: the page's CSP allows only its own files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  logLevel: 'warn',
});
