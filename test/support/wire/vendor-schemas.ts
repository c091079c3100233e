import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { _, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import standaloneCode from 'ajv/dist/standalone';
import { ANTHROPIC_SCHEMA_FILE } from './anthropic-schema';
import { wireFormats } from './wire-formats';

/**
 * Validators for what the vendors publish about their responses:
 *   - OpenAI: its OpenAPI 3.1 document (openai/openai-openapi, pinned; test/fixtures/wire-schemas/README.md),
 *     read as JSON Schema 2020-12 by Ajv. The document still carries OpenAPI 3.0's `nullable: true` on ~110
 *     schemas; 3.1 dropped that keyword, but OpenAI means it (its SDK types say `| null` there, and the API
 *     sends `"logprobs": null` where the schema says `type: object, nullable: true`), so it is read as
 *     "or null". `discriminator` is left to JSON Schema's own `oneOf`/`anyOf`, which it only annotates.
 *   - Anthropic: the JSON Schema derived from the `@anthropic-ai/sdk` types (anthropic-schema.ts).
 */
export const OPENAI_SPEC_FILE = join(__dirname, '../../fixtures/wire-schemas/openai-openapi.json');

/** Stream events the SDK's types leave out but its stream reader handles (src/core/streaming.ts) and Anthropic's streaming docs show. */
const ANTHROPIC_STREAM_EXTRAS = {
  // `event: ping` is skipped by the SDK; its body is `{"type": "ping"}`.
  Ping: {
    type: 'object',
    properties: { type: { const: 'ping' } },
    required: ['type'],
    additionalProperties: false,
  },
  // `event: error` is thrown as an APIError built from the body; Anthropic's example has no request_id there.
  StreamError: {
    type: 'object',
    properties: {
      type: { const: 'error' },
      error: { $ref: '#/definitions/ErrorObject' },
      request_id: { type: ['string', 'null'] },
    },
    required: ['type', 'error'],
    additionalProperties: false,
  },
};

export type SchemaErrors = string[] | null;

let openai: Ajv2020 | undefined;
let anthropic: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();
/** The documents as Ajv was given them, by id, to walk when explaining a failure. */
const documents = new Map<string, object>();

/** Validators' generated code refers to the formats by this module (see precompiled() below). */
const FORMATS_MODULE = join(__dirname, 'wire-formats');
const ajvOptions = {
  strict: false,
  allErrors: true,
  formats: wireFormats,
  code: { source: true, formats: _`require(${FORMATS_MODULE}).wireFormats` },
};

function openaiAjv(): Ajv2020 {
  if (openai) return openai;
  const document = readNullableAsOpenAIMeansIt(JSON.parse(readFileSync(OPENAI_SPEC_FILE, 'utf8')));
  openai = new Ajv2020({ ...ajvOptions, validateSchema: false });
  openai.addSchema(document, 'openai');
  documents.set('openai', document);
  return openai;
}

function anthropicAjv(): Ajv {
  if (anthropic) return anthropic;
  const file = JSON.parse(readFileSync(ANTHROPIC_SCHEMA_FILE, 'utf8')) as {
    definitions: Record<string, object>;
  };
  anthropic = new Ajv(ajvOptions);
  const document = { $id: 'anthropic', definitions: { ...file.definitions, ...ANTHROPIC_STREAM_EXTRAS } };
  anthropic.addSchema(document);
  documents.set('anthropic', document);
  return anthropic;
}

/** The schema the spec gives a path's response, e.g. ('/responses/{response_id}', 'get', 'application/json'). */
export function openaiOperationSchema(
  path: string,
  method: string,
  status: number,
  mediaType: string,
): string | undefined {
  openaiAjv();
  const document = documents.get('openai') as {
    paths: Record<
      string,
      Record<
        string,
        { responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }
      >
    >;
  };
  const ref = document.paths[path]?.[method]?.responses[String(status)]?.content?.[mediaType]?.schema?.$ref;
  return ref?.replace(/^#\/components\/schemas\//, '');
}

/** The schemas the wire recorder checks every exchange with. */
const OPENAI_CHECKED = [
  'CreateChatCompletionResponse',
  'CreateChatCompletionStreamResponse',
  'CreateEmbeddingResponse',
  'ListModelsResponse',
  'Model',
  'Response',
  'ResponseStreamEvent',
  'ResponseItemList',
  'ErrorResponse',
].map((name) => `openai#/components/schemas/${name}`);
const ANTHROPIC_CHECKED = [
  'Message',
  'RawMessageStreamEvent',
  'MessageTokensCount',
  'ErrorResponse',
  'Ping',
  'StreamError',
].map((name) => `anthropic#/definitions/${name}`);

/**
 * The recorder's validators, ready before any exchange waits for them. Compiling them takes Ajv about two seconds,
 * which every test file would pay again (Jest gives each file fresh modules), so the first compile saves them as
 * Ajv's standalone code in node_modules/.cache, keyed by everything they derive from, and later files load that.
 */
export function compileWireSchemas(): void {
  if (compiled.size > 0) return;
  const hash = createHash('sha256');
  for (const file of [
    OPENAI_SPEC_FILE,
    ANTHROPIC_SCHEMA_FILE,
    __filename,
    require.resolve('ajv/package.json'),
  ])
    hash.update(readFileSync(file));
  const key = hash.digest('hex').slice(0, 16);
  loadOrCompile(`${key}-openai`, openaiAjv, OPENAI_CHECKED);
  loadOrCompile(`${key}-anthropic`, anthropicAjv, ANTHROPIC_CHECKED);
}

const CACHE_DIR = join(__dirname, '../../../node_modules/.cache/wire-schemas');

function loadOrCompile(name: string, ajv: () => Ajv | Ajv2020, refs: string[]): void {
  const file = join(CACHE_DIR, `${name}.js`);
  const exportName = (ref: string) => ref.replace(/[^A-Za-z0-9]/g, '_');
  if (!existsSync(file)) {
    const code = standaloneCode(ajv(), Object.fromEntries(refs.map((ref) => [exportName(ref), ref])));
    mkdirSync(CACHE_DIR, { recursive: true });
    // Two Jest workers may both compile: each writes a file of its own and renames it into place whole.
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, code);
    renameSync(temporary, file);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const validators = require(file) as Record<string, ValidateFunction>;
  for (const ref of refs) compiled.set(ref, validators[exportName(ref)]);
}

/** Errors of `value` against a component schema of OpenAI's document (null when it conforms). */
export function checkOpenAI(schemaName: string, value: unknown): SchemaErrors {
  return check(`openai#/components/schemas/${schemaName}`, openaiAjv(), value);
}

/** Errors of `value` against a type of the Anthropic SDK (null when it conforms). */
export function checkAnthropic(typeName: string, value: unknown): SchemaErrors {
  return check(`anthropic#/definitions/${typeName}`, anthropicAjv(), value);
}

function validator(ajv: Ajv | Ajv2020, ref: string): ValidateFunction {
  let validate = compiled.get(ref);
  if (!validate) {
    validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`no schema ${ref}`);
    compiled.set(ref, validate);
  }
  return validate;
}

function check(ref: string, ajv: Ajv | Ajv2020, value: unknown): SchemaErrors {
  if (validator(ajv, ref)(value)) return null;
  const lines = explain(ajv, ref, value, '');
  return lines.length ? [...new Set(lines)].slice(0, 10) : ['does not conform (no detail found)'];
}

type Schema = Record<string, any>;

/**
 * What is wrong, said the way a reader wants it. Ajv's own list for a union holds every branch's complaint
 * (dozens for a Responses stream event); the vendors' unions are told apart by JSON type and by a `type`
 * member, so this walks the schema down the branch the value meant, and reports missing and unknown members
 * and wrong leaves there. Validity itself is always Ajv's verdict; this only explains a failure.
 */
function explain(ajv: Ajv | Ajv2020, ref: string, value: unknown, at: string): string[] {
  if (validator(ajv, ref)(value)) return [];
  const [pointer, schema] = resolve(ajv, ref);
  const where = at || '/';
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) {
    const kind = schema.anyOf ? 'anyOf' : 'oneOf';
    const branches = union
      .map((_, i) => `${pointer}/${kind}/${i}`)
      .filter((branch) => admits(ajv, branch, value));
    const meant =
      branches.length > 1 ? branches.filter((branch) => discriminates(ajv, branch, value)) : branches;
    if (meant.length === 1) return explain(ajv, meant[0], value, at);
    if (!branches.length)
      return [`${where} is ${jsonType(value)}, which none of the schema's alternatives takes`];
  }
  const lines: string[] = [];
  (schema.allOf as Schema[] | undefined)?.forEach((_, i) =>
    lines.push(...explain(ajv, `${pointer}/allOf/${i}`, value, at)),
  );
  if (value && typeof value === 'object' && !Array.isArray(value) && (schema.properties || schema.required)) {
    const record = value as Record<string, unknown>;
    for (const name of (schema.required as string[] | undefined) ?? [])
      if (!(name in record)) lines.push(`${where} must have required property '${name}'`);
    if (schema.additionalProperties === false) {
      for (const name of Object.keys(record))
        if (!(name in (schema.properties ?? {})))
          lines.push(`${where} must NOT have additional property '${name}'`);
    }
    for (const name of Object.keys(schema.properties ?? {})) {
      if (name in record)
        lines.push(
          ...explain(
            ajv,
            `${pointer}/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
            record[name],
            `${at}/${name}`,
          ),
        );
    }
  } else if (Array.isArray(value) && schema.items && typeof schema.items === 'object') {
    (value as unknown[]).forEach((item, i) =>
      lines.push(...explain(ajv, `${pointer}/items`, item, `${at}/${i}`)),
    );
  }
  if (lines.length) return lines;
  const validate = validator(ajv, ref);
  validate(value);
  return (validate.errors ?? []).map(
    (e) =>
      `${at}${e.instancePath || ''} ${e.message}${e.keyword === 'const' || e.keyword === 'enum' ? ` ${JSON.stringify(e.params)}` : ''}`,
  );
}

/** The schema a pointer names, through `$ref`s (which point into the same document), read from the document itself. */
function resolve(_ajv: Ajv | Ajv2020, ref: string): [string, Schema] {
  const root = ref.slice(0, ref.indexOf('#'));
  let pointer = ref;
  for (let hops = 0; hops < 20; hops++) {
    const schema = at(documents.get(root), pointer.slice(pointer.indexOf('#') + 1));
    if (
      typeof schema.$ref !== 'string' ||
      Object.keys(schema).some((key) => ['properties', 'anyOf', 'oneOf', 'allOf'].includes(key))
    )
      return [pointer, schema];
    pointer = `${root}${schema.$ref}`;
  }
  throw new Error(`$ref loop at ${ref}`);
}

function at(document: unknown, pointer: string): Schema {
  let node = document as Schema;
  for (const segment of pointer.split('/').slice(1))
    node = node?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  if (!node || typeof node !== 'object') throw new Error(`no schema at ${pointer}`);
  return node;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return Number.isInteger(value) ? 'integer' : typeof value;
}

/** The branch takes values of this JSON type (objects, arrays, strings, null...). */
function admits(ajv: Ajv | Ajv2020, ref: string, value: unknown): boolean {
  const [pointer, schema] = resolve(ajv, ref);
  const type = schema.type as string | string[] | undefined;
  if (type !== undefined) {
    const types = Array.isArray(type) ? type : [type];
    const actual = jsonType(value);
    if (!types.includes(actual) && !(actual === 'integer' && types.includes('number'))) return false;
  }
  if (schema.const !== undefined && typeof value !== 'object') return schema.const === value;
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union)
    return union.some((_, i) => admits(ajv, `${pointer}/${schema.anyOf ? 'anyOf' : 'oneOf'}/${i}`, value));
  return ((schema.allOf as Schema[] | undefined) ?? []).every((_, i) =>
    admits(ajv, `${pointer}/allOf/${i}`, value),
  );
}

/** An object branch whose `type` member takes the value's `type` (or does not constrain it). */
function discriminates(ajv: Ajv | Ajv2020, ref: string, value: unknown): boolean {
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return true;
  const [pointer, schema] = resolve(ajv, ref);
  const member = schema.properties?.type as Schema | undefined;
  if (member) {
    const [, declared] = member.$ref ? resolve(ajv, `${pointer}/properties/type`) : [pointer, member];
    if (declared.const !== undefined) return declared.const === type;
    if (Array.isArray(declared.enum)) return declared.enum.includes(type);
  }
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union)
    return union.some((_, i) =>
      discriminates(ajv, `${pointer}/${schema.anyOf ? 'anyOf' : 'oneOf'}/${i}`, value),
    );
  return ((schema.allOf as Schema[] | undefined) ?? []).every((_, i) =>
    discriminates(ajv, `${pointer}/allOf/${i}`, value),
  );
}

/** `nullable: true` (OpenAPI 3.0) -> `anyOf: [the schema, {type: 'null'}]`; `nullable: false` dropped. */
export function readNullableAsOpenAIMeansIt(node: unknown): any {
  if (Array.isArray(node)) return node.map(readNullableAsOpenAIMeansIt);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' && typeof value === 'boolean') continue;
    out[key] = readNullableAsOpenAIMeansIt(value);
  }
  return (node as { nullable?: unknown }).nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}
