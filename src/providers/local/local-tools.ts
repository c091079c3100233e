import { GatewayException } from '../../core/errors/gateway.exception';
import type { ChatRequest } from '../../core/chat-request';
import type { AutoToolChoice, LocalFunctions } from './local-protocol';

/**
 * OpenAI's `tools`, `tool_choice` and `parallel_tool_calls` -> node-llama-cpp's function calling. node-llama-cpp
 * documents the functions to the model in the chat template's own way, and once the model starts a call its
 * grammar only lets it write one of the offered names and arguments that match that function's schema, so a
 * call's arguments are always valid JSON of the right shape.
 */

export interface LocalToolUse {
  /** Absent: the model is offered no tools (none sent, or `tool_choice: "none"`). */
  functions?: LocalFunctions;
  /** The answer must be a call. */
  forceCall: boolean;
  /** The answer must be text, the tools documented in the prompt all the same (callFirst after tool results). */
  answerOnly?: boolean;
  maxParallelCalls?: number;
}

/** OpenAI's rule for function names (its API refuses others; node-llama-cpp's grammar needs no spaces or newlines). */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const invalid = (message: string, param: string) =>
  new GatewayException('invalid_request', message, { param, wireCode: 'invalid_value' });
const unsupported = (message: string, param: string) =>
  new GatewayException('invalid_request', message, { param, wireCode: 'unsupported_parameter' });

/** Checks a request's tool fields and maps them; throws a 400 naming the field. */
export function toolUseOf(request: ChatRequest, autoToolChoice: AutoToolChoice): LocalToolUse {
  const functions = functionsOf(request.tools);
  const names = Object.keys(functions);
  const choice = request.tool_choice;
  if (choice !== undefined && choice !== null && names.length === 0 && choice !== 'none') {
    throw invalid("'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice');
  }
  const parallel = request.parallel_tool_calls;
  if (parallel !== undefined && parallel !== null && typeof parallel !== 'boolean')
    throw invalid("'parallel_tool_calls' must be a boolean.", 'parallel_tool_calls');
  const maxParallelCalls = parallel === false ? 1 : undefined;
  if (names.length === 0) return { forceCall: false };

  const { mode, allowed } = choiceOf(choice, names);
  if (mode === 'none') return { forceCall: false };
  const offered = allowed ? Object.fromEntries(allowed.map((name) => [name, functions[name]])) : functions;
  if (mode === 'auto' && autoToolChoice === 'callFirst') {
    // Once a tool's result is in the conversation, no call is forced again: a user turn after it is as likely a
    // client's continuation (Claude Code resumes an answer cut at its max_tokens with a user message) as a new
    // request, and forcing a call on each sent a small model round a call-answer-resume loop until the context
    // overflowed.
    const forced = latestTurnIsUsers(request.messages) && !request.messages.some((m) => m.role === 'tool');
    return {
      functions: offered,
      forceCall: forced,
      ...(forced ? {} : { answerOnly: true }),
      maxParallelCalls,
    };
  }
  return { functions: offered, forceCall: mode === 'required', maxParallelCalls };
}

/** The conversation's latest turn is the user's (system messages after it, as Claude Code sends, do not count). */
function latestTurnIsUsers(messages: ChatRequest['messages']): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const role = messages[i].role;
    if (role !== 'system' && role !== 'developer') return role === 'user';
  }
  return false;
}

function functionsOf(tools: unknown): LocalFunctions {
  if (tools === undefined || tools === null) return {};
  if (!Array.isArray(tools)) throw invalid("'tools' must be an array.", 'tools');
  const functions: LocalFunctions = {};
  tools.forEach((tool: unknown, index) => {
    const param = `tools[${index}]`;
    if (typeof tool !== 'object' || tool === null) throw invalid(`${param} must be an object.`, param);
    const { type, function: fn } = tool as { type?: unknown; function?: unknown };
    if (type !== 'function')
      throw unsupported(
        `This model runs locally and calls function tools only: ${param}.type '${String(type)}' is not supported.`,
        `${param}.type`,
      );
    if (typeof fn !== 'object' || fn === null)
      throw invalid(`${param}.function must be an object.`, `${param}.function`);
    const { name, description, parameters } = fn as {
      name?: unknown;
      description?: unknown;
      parameters?: unknown;
    };
    if (typeof name !== 'string' || !FUNCTION_NAME.test(name)) {
      throw invalid(
        `${param}.function.name must be 1 to 64 letters, digits, underscores or dashes.`,
        `${param}.function.name`,
      );
    }
    if (Object.hasOwn(functions, name))
      throw invalid(`${param}.function.name: '${name}' is declared twice.`, `${param}.function.name`);
    if (description !== undefined && description !== null && typeof description !== 'string')
      throw invalid(`${param}.function.description must be a string.`, `${param}.function.description`);
    if (
      parameters !== undefined &&
      parameters !== null &&
      (typeof parameters !== 'object' || Array.isArray(parameters))
    ) {
      throw invalid(
        `${param}.function.parameters must be a JSON schema object.`,
        `${param}.function.parameters`,
      );
    }
    // No parameters: OpenAI's "empty parameter list", an empty object.
    const params = parameters ? grammarSchemaOf(parameters) : { type: 'object', properties: {} };
    functions[name] = { ...(typeof description === 'string' && description ? { description } : {}), params };
  });
  return functions;
}

function choiceOf(
  choice: unknown,
  names: string[],
): { mode: 'none' | 'auto' | 'required'; allowed?: string[] } {
  if (choice === undefined || choice === null || choice === 'auto') return { mode: 'auto' };
  if (choice === 'none' || choice === 'required') return { mode: choice };
  const known = (name: unknown, param: string): string => {
    if (typeof name !== 'string' || !names.includes(name))
      throw invalid(`${param}: no function named '${String(name)}' in 'tools'.`, param);
    return name;
  };
  if (typeof choice === 'object') {
    const { type } = choice as { type?: unknown };
    if (type === 'function') {
      const name = (choice as { function?: { name?: unknown } }).function?.name;
      return { mode: 'required', allowed: [known(name, 'tool_choice.function.name')] };
    }
    if (type === 'allowed_tools') {
      const spec = (choice as { allowed_tools?: { mode?: unknown; tools?: unknown } }).allowed_tools;
      if (spec?.mode !== 'auto' && spec?.mode !== 'required')
        throw invalid(
          "tool_choice.allowed_tools.mode must be 'auto' or 'required'.",
          'tool_choice.allowed_tools.mode',
        );
      if (!Array.isArray(spec.tools) || spec.tools.length === 0)
        throw invalid(
          'tool_choice.allowed_tools.tools must list at least one tool.',
          'tool_choice.allowed_tools.tools',
        );
      const allowed = spec.tools.map(
        (tool: { type?: unknown; function?: { name?: unknown }; name?: unknown }, index: number) =>
          known(tool?.function?.name ?? tool?.name, `tool_choice.allowed_tools.tools[${index}]`),
      );
      return { mode: spec.mode, allowed: [...new Set(allowed)] };
    }
    if (type === 'custom')
      throw unsupported('This model runs locally and calls function tools only.', 'tool_choice.type');
  }
  throw invalid(
    "'tool_choice' must be 'none', 'auto', 'required', a function or allowed_tools.",
    'tool_choice',
  );
}

/**
 * node-llama-cpp's grammar schema (GbnfJsonSchema) for a tool's JSON schema. The grammar supports a subset of
 * JSON Schema, and some of it differently:
 * - every property it lists is generated (`required` has no effect there), so an object keeps only its required
 *   properties: the model writes what the tool needs and leaves the optional ones to the tool's defaults;
 * - a schema with no type (any value) is written out as any JSON value (the grammar reads `{}` as `null`);
 * - `anyOf` becomes `oneOf`; `$ref` into `$defs`/`definitions` is resolved in place (a recursive schema becomes
 *   any value past a depth); `allOf` of objects is merged;
 * - keywords with no grammar equivalent (`pattern`, `minimum`, `multipleOf`, string formats other than dates)
 *   are dropped: the value keeps its type, and the tool checks the rest as it would for any caller.
 */
export function grammarSchemaOf(schema: object): object {
  return convert(schema as JsonSchema, schema as JsonSchema, 0);
}

type JsonSchema = Record<string, unknown>;

/** Past this depth of nested (or recursively referenced) schemas, any value. */
const MAX_DEPTH = 12;
const ANY_VALUE = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'array' },
    { type: 'object', additionalProperties: true },
  ],
};
const PRIMITIVE_TYPES = ['string', 'number', 'integer', 'boolean', 'null'];
const SHARED_KEYWORDS = [
  'type',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'format',
  'minLength',
  'maxLength',
];
const DATE_FORMATS = ['date-time', 'time', 'date'];

function convert(schema: JsonSchema, root: JsonSchema, depth: number): object {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || depth > MAX_DEPTH)
    return ANY_VALUE;
  const description =
    typeof schema.description === 'string' && schema.description ? { description: schema.description } : {};
  const withNull = (converted: object) =>
    schema.nullable === true ? { oneOf: [converted, { type: 'null' }], ...description } : converted;

  if (typeof schema.$ref === 'string') {
    const target = resolveRef(schema.$ref, root);
    return target ? withNull({ ...convert(target, root, depth + 1), ...description }) : ANY_VALUE;
  }
  if ('const' in schema && isPrimitive(schema.const))
    return withNull({ const: schema.const, ...description });
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter(isPrimitive);
    return values.length ? withNull({ enum: values, ...description }) : ANY_VALUE;
  }
  const alternatives = (
    Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined
  ) as JsonSchema[] | undefined;
  if (alternatives?.length) {
    // Structural keywords beside anyOf (e.g. a shared `type`) apply to each alternative.
    const shared = Object.fromEntries(
      SHARED_KEYWORDS.filter((key) => key in schema).map((key) => [key, schema[key]]),
    );
    return withNull({
      oneOf: alternatives.map((alternative) => convert({ ...shared, ...alternative }, root, depth + 1)),
      ...description,
    });
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length)
    return withNull(convert(mergeAllOf(schema), root, depth + 1));

  const types = (
    Array.isArray(schema.type)
      ? schema.type
      : typeof schema.type === 'string'
        ? [schema.type]
        : inferredTypes(schema)
  ).filter((type): type is string => typeof type === 'string');
  if (types.length === 0) return ANY_VALUE;
  const converted = types.map((type) => convertType(type, schema, root, depth));
  const one =
    converted.length === 1
      ? converted[0]
      : allPrimitive(types)
        ? { type: types.filter((t) => PRIMITIVE_TYPES.includes(t)) }
        : { oneOf: converted };
  return withNull({ ...one, ...description });
}

function convertType(type: string, schema: JsonSchema, root: JsonSchema, depth: number): object {
  if (type === 'object') return objectSchema(schema, root, depth);
  if (type === 'array') {
    const out: JsonSchema = { type: 'array' };
    if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items))
      out.items = convert(schema.items as JsonSchema, root, depth + 1);
    const prefix = Array.isArray(schema.prefixItems)
      ? schema.prefixItems
      : Array.isArray(schema.items)
        ? schema.items
        : undefined;
    if (prefix) out.prefixItems = prefix.map((item: JsonSchema) => convert(item, root, depth + 1));
    if (isCount(schema.minItems)) out.minItems = schema.minItems;
    if (isCount(schema.maxItems)) out.maxItems = schema.maxItems;
    return out;
  }
  if (type === 'string') {
    if (typeof schema.format === 'string' && DATE_FORMATS.includes(schema.format))
      return { type: 'string', format: schema.format };
    const out: JsonSchema = { type: 'string' };
    if (isCount(schema.minLength)) out.minLength = schema.minLength;
    if (isCount(schema.maxLength)) out.maxLength = schema.maxLength;
    return out;
  }
  if (PRIMITIVE_TYPES.includes(type)) return { type };
  return ANY_VALUE;
}

function objectSchema(schema: JsonSchema, root: JsonSchema, depth: number): object {
  const properties = (
    typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {}
  ) as Record<string, JsonSchema>;
  const required = new Set(
    Array.isArray(schema.required)
      ? schema.required.filter((key): key is string => typeof key === 'string')
      : [],
  );
  const kept = Object.entries(properties).filter(([key]) => required.has(key));
  const out: JsonSchema = {
    type: 'object',
    properties: Object.fromEntries(kept.map(([key, value]) => [key, convert(value, root, depth + 1)])),
  };
  // A map (no fixed properties, values of one schema) stays a map; an object that lists properties gets exactly those.
  const extra = schema.additionalProperties;
  if (Object.keys(properties).length === 0 && extra !== undefined && extra !== false) {
    out.additionalProperties = extra === true ? true : convert(extra as JsonSchema, root, depth + 1);
  }
  return out;
}

function mergeAllOf(schema: JsonSchema): JsonSchema {
  const merged: JsonSchema = { ...schema, allOf: undefined };
  const properties: Record<string, unknown> = { ...((schema.properties as object) ?? {}) };
  const required = new Set<unknown>(Array.isArray(schema.required) ? schema.required : []);
  for (const part of schema.allOf as JsonSchema[]) {
    if (typeof part !== 'object' || part === null) continue;
    Object.assign(properties, part.properties ?? {});
    if (Array.isArray(part.required)) part.required.forEach((key) => required.add(key));
    for (const [key, value] of Object.entries(part))
      if (!(key in merged) || merged[key] === undefined) merged[key] = value;
  }
  return { ...merged, properties, required: [...required] };
}

/** `#/$defs/name` or `#/definitions/name` (a JSON pointer into the schema's own root); undefined if it leads nowhere. */
function resolveRef(ref: string, root: JsonSchema): JsonSchema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const segment of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~');
    node = typeof node === 'object' && node !== null ? (node as JsonSchema)[key] : undefined;
  }
  return typeof node === 'object' && node !== null ? (node as JsonSchema) : undefined;
}

/** A schema without `type` whose keywords say what it is (`properties` -> object, `items` -> array). */
function inferredTypes(schema: JsonSchema): string[] {
  if (schema.properties || schema.additionalProperties !== undefined) return ['object'];
  if (schema.items || schema.prefixItems) return ['array'];
  return [];
}

const isPrimitive = (value: unknown) =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value);
const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;
const allPrimitive = (types: string[]) => types.every((type) => PRIMITIVE_TYPES.includes(type));
