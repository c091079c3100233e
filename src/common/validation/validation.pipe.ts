import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { GatewayException } from '../errors/gateway.exception';
import { memoizeValidationMetadata } from './metadata-memo';

/**
 * `messages.0.content` (class-validator's path) -> `messages[0].content` (OpenAI's `param`).
 * Returns the first problem found, like OpenAI does.
 */
export function firstProblem(errors: ValidationError[], parent = ''): { param: string; message: string } | null {
  for (const error of errors) {
    const param = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent
        ? `${parent}.${error.property}`
        : error.property;
    const constraint = mostBasic(error.constraints);
    if (constraint) {
      // class-validator phrases messages as "<property> must ..."; name the full param instead.
      const text = constraint.startsWith(`${error.property} `) ? constraint.slice(error.property.length + 1) : constraint;
      return { param, message: `Invalid '${param}': ${text}.` };
    }
    const nested = firstProblem(error.children ?? [], param);
    if (nested) return nested;
  }
  return null;
}

/**
 * Type checks come first: class-validator lists constraints in reverse decorator order, so `"10"` for
 * `@IsInt() @Min(1)` used to say "must not be less than 1" when the problem is that it is not an integer.
 */
const TYPE_CONSTRAINTS = ['isDefined', 'isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject', 'isIn', 'isEnum'];

function mostBasic(constraints: Record<string, string> | undefined): string | undefined {
  if (!constraints) return undefined;
  for (const name of TYPE_CONSTRAINTS) if (constraints[name]) return constraints[name];
  return Object.values(constraints)[0];
}

/**
 * The one global ValidationPipe. Unknown fields are kept (not whitelisted away) so
 * new OpenAI parameters reach OpenAI-compatible backends without a gateway release.
 */
export class GatewayValidationPipe extends ValidationPipe {
  /** `strict` refuses unknown fields (the admin API: a typo in a limit name must not pass silently). */
  constructor(options: { strict?: boolean } = {}) {
    memoizeValidationMetadata();
    super({
      transform: true,
      whitelist: options.strict === true,
      forbidNonWhitelisted: options.strict === true,
      forbidUnknownValues: false,
      // No implicit conversion: "1" for an integer is the client's bug and must be a 400.
      transformOptions: { enableImplicitConversion: false },
      validationError: { target: false, value: false },
      exceptionFactory: (errors: ValidationError[]) => {
        const problem = firstProblem(errors) ?? { param: null, message: 'The request body is invalid.' };
        return new GatewayException('invalid_request', problem.message, { param: problem.param, wireCode: null });
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A POST without a body (no Content-Type either) validates like `{}`.
    if (metadata.type === 'body' && value === undefined) value = {};
    if (metadata.type === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw new GatewayException('invalid_request', 'The request body must be a JSON object.', { wireCode: null });
    }
    return super.transform(value, metadata);
  }
}
