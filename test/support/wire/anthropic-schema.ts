import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';

/**
 * The Messages API's response shapes as JSON Schema, derived from the type declarations of the installed
 * `@anthropic-ai/sdk` (its `.d.ts` files are generated from Anthropic's API definition; the SDK publishes no
 * schema of its own). ts-json-schema-generator reads the declarations as TypeScript does:
 *   - a property declared without `?` is required, with `null` allowed only where the type says `| null`;
 *   - an interface takes no property it does not declare (`additionalProperties: false`): a field no client
 *     type knows is drift too (a leaked internal field, a misspelt name);
 *   - string literal unions are enums, `unknown` is anything.
 * The result is committed (test/fixtures/wire-schemas/) so tests need not run the TypeScript compiler;
 * test/unit/wire-schemas.spec.ts derives it again and fails when it no longer matches the installed SDK.
 */
export const ANTHROPIC_SCHEMA_FILE = join(__dirname, '../../fixtures/wire-schemas/anthropic-sdk.schema.json');

/** The SDK types a Messages client reads: bodies, stream events, counts and errors. */
export const ANTHROPIC_ROOT_TYPES = [
  'Message',
  'RawMessageStreamEvent',
  'MessageTokensCount',
  'ErrorResponse',
] as const;

export interface AnthropicSchemaFile {
  $schema: string;
  $comment: string;
  sdkVersion: string;
  definitions: Record<string, object>;
}

function sdkRoot(): string {
  return dirname(require.resolve('@anthropic-ai/sdk')); // the package's root: its package.json is not exported
}

export function installedSdkVersion(): string {
  return (JSON.parse(readFileSync(join(sdkRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** Runs the generator over the SDK's declarations (a few seconds: it builds a TypeScript program). */
export function deriveAnthropicSchema(): AnthropicSchemaFile {
  const generator = createGenerator({
    path: join(sdkRoot(), 'resources/index.d.ts'),
    type: '*',
    expose: 'export',
    topRef: true,
    jsDoc: 'none',
    skipTypeCheck: true,
    additionalProperties: false,
  });
  const definitions: Record<string, object> = {};
  for (const type of ANTHROPIC_ROOT_TYPES)
    Object.assign(definitions, generator.createSchema(type).definitions);
  const sorted = Object.fromEntries(
    Object.keys(definitions)
      .sort()
      .map((name) => [name, definitions[name]]),
  );
  const version = installedSdkVersion();
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $comment: `Derived by test/support/wire/anthropic-schema.ts with ts-json-schema-generator from @anthropic-ai/sdk ${version} resources/index.d.ts (types ${ANTHROPIC_ROOT_TYPES.join(', ')}). Do not edit: regenerate with UPDATE_WIRE_SCHEMAS=1 npx jest test/unit/wire-schemas.spec.ts`,
    sdkVersion: version,
    definitions: sorted,
  };
}

export function committedAnthropicSchema(): AnthropicSchemaFile {
  return JSON.parse(readFileSync(ANTHROPIC_SCHEMA_FILE, 'utf8')) as AnthropicSchemaFile;
}
