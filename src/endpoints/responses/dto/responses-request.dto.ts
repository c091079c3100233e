import 'reflect-metadata';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { Type } from 'class-transformer';
import { MAX_TOOLS } from '../../../core/chat-request';
import { Satisfies } from '../../../common/validation/satisfies';
import { inputProblem, type InputItem } from './response-items';

export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

export class ReasoningDto {
  [passthrough: string]: unknown;
  @IsOptional()
  @IsIn(REASONING_EFFORTS as unknown as string[], {
    message: `must be one of: ${REASONING_EFFORTS.join(', ')}`,
  })
  effort?: (typeof REASONING_EFFORTS)[number] | null;
  @IsOptional()
  @IsIn(['auto', 'concise', 'detailed'], { message: 'must be "auto", "concise" or "detailed"' })
  summary?: string | null;
}

/**
 * POST /v1/responses. Only what the gateway reads is declared; every other field is kept and reaches
 * Responses-capable backends unchanged.
 */
export class ResponsesRequestDto {
  [passthrough: string]: unknown;

  @IsString() @IsNotEmpty() model!: string;
  @Satisfies((value) => inputProblem(value)) input!: string | InputItem[];
  @IsOptional() @IsString() instructions?: string | null;
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_TOOLS, { message: `must have at most ${MAX_TOOLS} tools (OpenAI's limit per request)` })
  @Satisfies((tools) => toolsProblem(tools))
  tools?: Array<Record<string, unknown>>;
  @IsOptional()
  @Satisfies((choice) =>
    choice === null || typeof choice === 'string'
      ? ['none', 'auto', 'required', null].includes(choice as string)
        ? null
        : 'must be "none", "auto", "required" or an object'
      : typeof choice === 'object'
        ? null
        : 'must be a string or an object',
  )
  tool_choice?: string | Record<string, unknown> | null;
  @IsOptional() @IsBoolean() parallel_tool_calls?: boolean | null;
  @IsOptional() @IsInt() @Min(16) max_output_tokens?: number | null;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number | null;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number | null;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => ReasoningDto) reasoning?: ReasoningDto | null;
  @IsOptional() @IsObject() text?: {
    format?: {
      type?: string;
      name?: string;
      schema?: unknown;
      strict?: boolean | null;
      description?: string;
    };
    [key: string]: unknown;
  } | null;
  @IsOptional() @IsString() @IsNotEmpty() previous_response_id?: string | null;
  @IsOptional() @IsBoolean() store?: boolean | null;
  @IsOptional() @IsBoolean() stream?: boolean | null;
  @IsOptional() @IsObject() metadata?: Record<string, string> | null;
  @IsOptional() @IsString() user?: string | null;
  /** OpenAI's prompt-cache routing hint: carried to OpenAI-compatible backends, translated or not. */
  @IsOptional() @IsString() prompt_cache_key?: string | null;
  @IsOptional() @IsArray() @IsString({ each: true }) include?: string[] | null;
}

function toolsProblem(tools: unknown): string | null {
  if (!Array.isArray(tools)) return null;
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i] as Record<string, unknown> | null;
    if (typeof tool !== 'object' || tool === null || typeof tool.type !== 'string')
      return `[${i}] must be an object with a string "type"`;
    if (tool.type === 'function' && (typeof tool.name !== 'string' || !tool.name))
      return `[${i}].name is required`;
    if (tool.type === 'namespace' && (typeof tool.name !== 'string' || !Array.isArray(tool.tools)))
      return `[${i}] needs a name and tools`;
  }
  return null;
}
