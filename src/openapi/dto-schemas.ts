import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { MAX_TOOL_GLOB_LENGTH, MAX_TOOL_GLOBS } from '../mcp/tool-globs';
// class-transformer's metadata (which class a nested @Type points at) has no typed entry point.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: never;
};
/** A JSON Schema (OpenAPI 3.1 uses JSON Schema 2020-12). */
export type SchemaObject = Record<string, unknown>;

/**
 * JSON Schemas of every DTO class, generated from the same class-validator decorators that validate requests
 * (class-validator-jsonschema), so the document cannot drift from what the gateway accepts. Custom validators
 * are described here, once each.
 */
export function dtoSchemas(): Record<string, SchemaObject> {
  return validationMetadatasToSchemas({
    refPointerPrefix: '#/components/schemas/',
    classTransformerMetadataStorage: defaultMetadataStorage,
    additionalConverters: {
      isMessageContent: {
        description:
          'A string; an array of content parts (text parts need `text`); or null for an assistant message with tool_calls.',
        oneOf: [
          { type: 'string' },
          {
            type: 'array',
            minItems: 1,
            items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
          },
          { type: 'null' },
        ],
      },
      isStopSequences: {
        oneOf: [{ type: 'string' }, { type: 'array', minItems: 1, maxItems: 4, items: { type: 'string' } }],
      },
      isStringMap: { type: 'object', additionalProperties: { type: 'string' } },
      isMetadataPatch: {
        description: 'Labels to set; null removes one.',
        type: 'object',
        maxProperties: 64,
        additionalProperties: { oneOf: [{ type: 'string', maxLength: 256 }, { type: 'null' }] },
      },
      isToolGlobs: {
        description:
          "Globs over MCP tools' gateway names, `<server>__<tool>` (`*` matches any run of characters); a team's must each be able to match a tool of its servers.",
        type: 'array',
        maxItems: MAX_TOOL_GLOBS,
        items: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_TOOL_GLOB_LENGTH,
          pattern: '^[^\\s,\\x00-\\x1f\\x7f]+$',
        },
      },
      isEmbeddingInput: {
        oneOf: [
          { type: 'string', minLength: 1 },
          { type: 'array', minItems: 1, maxItems: 2048, items: { type: 'string', minLength: 1 } },
          { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } },
          {
            type: 'array',
            minItems: 1,
            maxItems: 2048,
            items: { type: 'array', minItems: 1, items: { type: 'integer', minimum: 0 } },
          },
        ],
      },
      // Cross-field rules (stream_options only with stream; a thinking budget under max_tokens) add no shape.
      satisfies: {},
    },
  }) as Record<string, SchemaObject>;
}
