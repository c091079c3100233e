import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
export { Satisfies } from '../../../common/validation/satisfies';

const TEXT_ONLY_ROLES = new Set(['system', 'developer', 'tool']);

function isPart(part: unknown): part is { type: string; text?: unknown } {
  return typeof part === 'object' && part !== null && typeof (part as { type?: unknown }).type === 'string';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What is wrong with one part of a known type (OpenAI's `ChatCompletionContentPart*`), or null. The translations
 * read these fields (an image's URL, audio's data) and must not be handed a part without them.
 */
function partProblem(part: { type: string } & Record<string, unknown>): string | null {
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' ? null : '.text must be a string';
    case 'image_url':
      return isObject(part.image_url) && typeof part.image_url.url === 'string'
        ? null
        : '.image_url must be an object with a string "url"';
    case 'input_audio':
      return isObject(part.input_audio) &&
        typeof part.input_audio.data === 'string' &&
        typeof part.input_audio.format === 'string'
        ? null
        : '.input_audio must be an object with a string "data" and "format"';
    case 'file':
      return isObject(part.file) &&
        ['file_data', 'file_id', 'filename'].every(
          (key) =>
            (part.file as Record<string, unknown>)[key] === undefined ||
            typeof (part.file as Record<string, unknown>)[key] === 'string',
        )
        ? null
        : '.file must be an object (file_data, file_id and filename are strings)';
    case 'refusal':
      return typeof part.refusal === 'string' ? null : '.refusal must be a string';
    default:
      return null;
  }
}

/**
 * `content`: a string; or a non-empty array of parts (the known types with their fields, see partProblem;
 * system/developer/tool messages take text parts only); or null for an assistant message that carries tool calls.
 * Part types the gateway does not know (a server's own, such as vLLM's video_url) pass through to the backend,
 * which knows what it supports.
 */
export function contentProblem(content: unknown, message: Record<string, unknown>): string | null {
  const role = message.role;
  if (typeof content === 'string') return null;
  if (content === null || content === undefined) {
    if (role === 'assistant' && (message.tool_calls || message.function_call)) return null;
    return role === 'assistant'
      ? 'must be a string or an array of parts unless the message has tool_calls'
      : 'is required (a string or an array of content parts)';
  }
  if (!Array.isArray(content)) return 'must be a string or an array of content parts';
  if (content.length === 0) return 'must not be an empty array';
  for (let i = 0; i < content.length; i++) {
    const part = content[i];
    if (!isPart(part) || Array.isArray(part)) return `[${i}] must be an object with a string "type"`;
    const problem = partProblem(part as { type: string } & Record<string, unknown>);
    if (problem) return `[${i}]${problem}`;
    if (part.type !== 'text' && TEXT_ONLY_ROLES.has(String(role))) {
      return `[${i}] must be a text part for ${String(role)} messages`;
    }
  }
  return null;
}

/**
 * `tool_calls` of an assistant message: an array of calls as OpenAI defines them, a `function` call with a string
 * `id` and a `function` of string `name` and `arguments` (a JSON text), or a `custom` one with a `custom` of string
 * `name` and `input`. Every translation reads these fields.
 */
export function toolCallsProblem(toolCalls: unknown): string | null {
  if (!Array.isArray(toolCalls)) return 'must be an array';
  for (let i = 0; i < toolCalls.length; i++) {
    const call: unknown = toolCalls[i];
    if (!isObject(call)) return `[${i}] must be an object`;
    if (typeof call.id !== 'string') return `[${i}].id must be a string`;
    if (call.type === 'function') {
      const fn = call.function;
      if (!isObject(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string')
        return `[${i}].function must be an object with a string "name" and "arguments"`;
    } else if (call.type === 'custom') {
      const custom = call.custom;
      if (!isObject(custom) || typeof custom.name !== 'string' || typeof custom.input !== 'string')
        return `[${i}].custom must be an object with a string "name" and "input"`;
    } else return `[${i}].type must be one of: function, custom`;
  }
  return null;
}

export function IsMessageContent(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isMessageContent',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          contentProblem(value, args.object as Record<string, unknown>) === null,
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} ${contentProblem(args.value, args.object as Record<string, unknown>)}`,
      },
    });
}

/** `stop`: a string, or an array of 1 to 4 strings. */
export function IsStopSequences(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isStopSequences',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' ||
          (Array.isArray(value) &&
            value.length >= 1 &&
            value.length <= 4 &&
            value.every((v) => typeof v === 'string')),
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} must be a string or an array of 1 to 4 strings`,
      },
    });
}
