// Jest transformer for the ES-module-only packages Jest must load (NestJS 12; jest.config.js says which): Node can
// require them from our CommonJS build, Jest's module runtime cannot, so they are transpiled to CommonJS here.
// `import.meta.url` (one use, to make a `require`) becomes the file's URL, which CommonJS knows as __filename.
import { createHash } from 'node:crypto';
import ts from 'typescript';

const options = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  allowJs: true,
  esModuleInterop: true, // `import express from 'express'` is CommonJS's module.exports
  sourceMap: false,
};

export default {
  getCacheKey(source, path) {
    return createHash('sha256')
      .update(import.meta.url)
      .update(ts.version)
      .update(path)
      .update(source)
      .digest('hex');
  },
  process(source, path) {
    const withoutMeta = source.replace(
      /\bimport\.meta\.url\b/g,
      "require('node:url').pathToFileURL(__filename).href",
    );
    return { code: ts.transpileModule(withoutMeta, { compilerOptions: options, fileName: path }).outputText };
  },
};
