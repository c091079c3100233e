import { ValidationPipe, type ArgumentMetadata, type ValidationPipeOptions } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { GatewayException } from '../../core/errors/gateway.exception';
import { isPacedBody, nextTurn } from '../http/json-shape';
import {
  compileValidator,
  TYPE_CONSTRAINTS,
  UnsupportedValidation,
  type CompiledValidator,
  type DtoClass,
  type ValidationProblem,
} from './compiled-validator';
import { memoizeValidationMetadata } from './metadata-memo';

/**
 * `messages.0.content` (class-validator's path) -> `messages[0].content` (OpenAI's `param`).
 * Returns the first problem found, like OpenAI does.
 */
export function firstProblem(
  errors: ValidationError[],
  parent = '',
): { param: string; message: string } | null {
  for (const error of errors) {
    const param = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent
        ? `${parent}.${error.property}`
        : error.property;
    const constraint = mostBasic(error.constraints);
    if (constraint) {
      // class-validator phrases messages as "<property> must ..."; name the full param instead.
      const text = constraint.startsWith(`${error.property} `)
        ? constraint.slice(error.property.length + 1)
        : constraint;
      return { param, message: `Invalid '${param}': ${text}.` };
    }
    const nested = firstProblem(error.children ?? [], param);
    if (nested) return nested;
  }
  return null;
}

/** The compiled validator's problem as OpenAI names it: `messages[0].content`, "Invalid '...': must be ...". */
export function describeProblem(problem: ValidationProblem): { param: string; message: string } {
  let param = '';
  for (const segment of problem.path)
    param = /^\d+$/.test(segment) ? `${param}[${segment}]` : param ? `${param}.${segment}` : segment;
  const property = problem.path.at(-1) ?? '';
  const text = problem.message.startsWith(`${property} `)
    ? problem.message.slice(property.length + 1)
    : problem.message;
  return { param, message: `Invalid '${param}': ${text}.` };
}

function mostBasic(constraints: Record<string, string> | undefined): string | undefined {
  if (!constraints) return undefined;
  for (const name of TYPE_CONSTRAINTS) if (constraints[name]) return constraints[name];
  return Object.values(constraints)[0];
}

/**
 * Nest's ValidationPipe as the gateway configures it: class-transformer then class-validator, the first problem
 * as an OpenAI error. What query strings go through, and the reference the compiled validator is held to
 * (test/unit/compiled-validator.spec.ts).
 */
export function classValidatorOptions(strict: boolean): ValidationPipeOptions {
  return {
    transform: true,
    whitelist: strict,
    forbidNonWhitelisted: strict,
    forbidUnknownValues: false,
    // No implicit conversion: "1" for an integer is the client's bug and must be a 400.
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors: ValidationError[]) => {
      const problem = firstProblem(errors) ?? { param: null, message: 'The request body is invalid.' };
      return new GatewayException('invalid_request', problem.message, {
        param: problem.param,
        wireCode: null,
      });
    },
  };
}

/**
 * The one global ValidationPipe. Unknown fields are kept (not whitelisted away) so
 * new OpenAI parameters reach OpenAI-compatible backends without a gateway release.
 *
 * Request bodies are checked by a validator compiled from their DTO class's metadata (compiled-validator.ts) and
 * reach the handler as the parsed JSON itself; class-transformer's instances and class-validator's walk cost
 * ~8 us per item and made a body of many small items block the event loop for seconds. Query strings (which
 * need class-transformer's conversions, and are small) still go through Nest's ValidationPipe.
 */
export class GatewayValidationPipe extends ValidationPipe {
  private readonly strict: boolean;
  private readonly validators = new Map<DtoClass, CompiledValidator | null>();

  /** `strict` refuses unknown fields (the admin API: a typo in a limit name must not pass silently). */
  constructor(options: { strict?: boolean } = {}) {
    memoizeValidationMetadata();
    super(classValidatorOptions(options.strict === true));
    this.strict = options.strict === true;
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A POST without a body (no Content-Type either) validates like `{}`.
    if (metadata.type === 'body' && value === undefined) value = {};
    if (metadata.type === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw new GatewayException('invalid_request', 'The request body must be a JSON object.', {
        wireCode: null,
      });
    }
    const validator = metadata.type === 'body' ? this.validatorFor(metadata.metatype) : undefined;
    if (!validator) return super.transform(value, metadata);
    // A big body is validated on a turn of its own and the handler starts on the next (json-shape.ts).
    const paced = isPacedBody(value);
    if (paced) await nextTurn();
    const problem = await validator(value as Record<string, unknown>);
    if (problem) {
      const { param, message } = describeProblem(problem);
      throw new GatewayException('invalid_request', message, { param, wireCode: null });
    }
    if (paced) await nextTurn();
    return value;
  }

  /** The compiled validator of a body's DTO class; none for a parameter without one (then Nest's pipe decides). */
  private validatorFor(metatype: ArgumentMetadata['metatype']): CompiledValidator | undefined {
    if (!metatype || [String, Boolean, Number, Array, Object, Buffer, Date].includes(metatype as never))
      return undefined;
    let validator = this.validators.get(metatype);
    if (validator === undefined) {
      try {
        validator = compileValidator(metatype, { strict: this.strict });
      } catch (error) {
        if (!(error instanceof UnsupportedValidation)) throw error;
        validator = null;
      }
      this.validators.set(metatype, validator);
    }
    return validator ?? undefined;
  }
}
