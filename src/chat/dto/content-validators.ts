import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

const TEXT_ONLY_ROLES = new Set(['system', 'developer', 'tool']);

function isPart(part: unknown): part is { type: string; text?: unknown } {
  return typeof part === 'object' && part !== null && typeof (part as { type?: unknown }).type === 'string';
}

/**
 * `content`: a string; or a non-empty array of parts (text parts need a string `text`;
 * system/developer/tool messages take text parts only); or null for an assistant
 * message that carries tool calls. Other part types (image_url, input_audio...) pass
 * through to the backend, which knows what it supports.
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
    if (!isPart(part)) return `[${i}] must be an object with a string "type"`;
    if (part.type === 'text' && typeof part.text !== 'string') return `[${i}].text must be a string`;
    if (part.type !== 'text' && TEXT_ONLY_ROLES.has(String(role))) {
      return `[${i}] must be a text part for ${String(role)} messages`;
    }
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

/** A cross-field rule; `check` returns a problem (without the property name) or null. */
export function Satisfies(
  check: (value: unknown, object: Record<string, unknown>) => string | null,
  options?: ValidationOptions,
) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'satisfies',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          check(value, args.object as Record<string, unknown>) === null,
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} ${check(args.value, args.object as Record<string, unknown>)}`,
      },
    });
}
