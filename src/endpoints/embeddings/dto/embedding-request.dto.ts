import 'reflect-metadata';
import {
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Min,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import type { EmbeddingRequest } from '../../../core/embedding-request';

/** OpenAI's limits on one embeddings request: at most 2048 inputs, none empty. */
const MAX_INPUTS = 2048;
/** OpenAI's limit on the tokens summed across all inputs of one request (checked here for token arrays). */
const MAX_TOTAL_TOKENS = 300_000;

/** What is wrong with `input`, or null: a string, strings, a token array, or token arrays, none empty. */
export function inputProblem(input: unknown): string | null {
  const isTokens = (value: unknown) =>
    Array.isArray(value) && value.length > 0 && value.every((t) => Number.isInteger(t) && (t as number) >= 0);
  if (typeof input === 'string') return input.length ? null : 'must not be empty';
  if (!Array.isArray(input) || input.length === 0)
    return 'must be a string, an array of strings, or an array of token arrays (not empty)';
  if (input.length > MAX_INPUTS) return `must have at most ${MAX_INPUTS} items`;
  if (input.every((item) => typeof item === 'string'))
    return input.every((item) => item.length > 0) ? null : 'must not contain empty strings';
  if (isTokens(input))
    return input.length <= MAX_TOTAL_TOKENS ? null : `must have at most ${MAX_TOTAL_TOKENS} tokens in all`;
  if (input.every((item) => isTokens(item))) {
    const tokens = input.reduce((sum: number, item) => sum + (item as number[]).length, 0);
    return tokens <= MAX_TOTAL_TOKENS
      ? null
      : `must have at most ${MAX_TOTAL_TOKENS} tokens in all (${tokens} given)`;
  }
  return 'must be a string, an array of strings, a token array (non-negative integers), or an array of token arrays';
}

function IsEmbeddingInput() {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isEmbeddingInput',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => inputProblem(value) === null,
        defaultMessage: (args: ValidationArguments) => `${args.property} ${inputProblem(args.value)}`,
      },
    });
}

/** POST /v1/embeddings. Fields not declared here pass through to the backend unchanged, as for chat. */
export class EmbeddingRequestDto implements EmbeddingRequest {
  [passthrough: string]: unknown;

  @IsString() @IsNotEmpty() model!: string;
  @IsEmbeddingInput() input!: string | string[] | number[] | number[][];
  @IsOptional() @IsIn(['float', 'base64'], { message: 'must be "float" or "base64"' }) encoding_format?:
    'float' | 'base64';
  @IsOptional() @IsInt() @Min(1) dimensions?: number;
  @IsOptional() @IsString() user?: string;
}
