import { fullFormats } from 'ajv-formats/dist/formats';

/**
 * The string formats the vendor schemas use: ajv-formats' full set and OpenAI's `unixtime`. In a module of its own
 * because the cached validators (vendor-schemas.ts) are generated code that requires it by path.
 */
export const wireFormats = {
  ...fullFormats,
  unixtime: { type: 'number' as const, validate: (value: number) => Number.isInteger(value) },
};
