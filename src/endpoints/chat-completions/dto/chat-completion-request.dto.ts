import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
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
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { MAX_TOOLS, type ChatMessage, type ChatRequest } from '../../../core/chat-request';
import { IsMessageContent, IsStopSequences, Satisfies, toolCallsProblem } from './content-validators';

export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

export { MAX_TOOLS };

export class ChatMessageDto implements ChatMessage {
  @IsIn(MESSAGE_ROLES as unknown as string[], { message: `must be one of: ${MESSAGE_ROLES.join(', ')}` })
  role!: (typeof MESSAGE_ROLES)[number];

  @IsMessageContent()
  content!: string | Array<Record<string, unknown>> | null;

  @IsOptional() @IsString() name?: string;

  @ValidateIf((m: ChatMessageDto) => m.role === 'tool') @IsString() @IsNotEmpty() tool_call_id?: string;

  @IsOptional() @Satisfies(toolCallsProblem) tool_calls?: unknown[];
}

export class StreamOptionsDto {
  @IsOptional() @IsBoolean() include_usage?: boolean;
}

export class ThinkingDto {
  @IsIn(['enabled', 'disabled'], { message: 'must be "enabled" or "disabled"' }) type!:
    'enabled' | 'disabled';

  @ValidateIf((t: ThinkingDto) => t.type === 'enabled' || t.budget_tokens !== undefined)
  @IsInt()
  @Min(1)
  budget_tokens?: number;
}

/**
 * POST /v1/chat/completions. Only the fields the gateway itself understands are
 * declared; every other OpenAI field (tools, response_format, seed, ...) is kept
 * on the object and passed through to OpenAI-compatible backends unchanged.
 */
export class ChatCompletionRequestDto implements ChatRequest {
  [passthrough: string]: unknown;

  @IsString() @IsNotEmpty() model!: string;

  @IsArray()
  @ArrayMinSize(1, { message: 'must contain at least one message' })
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages!: ChatMessageDto[];

  @IsOptional() @IsInt() @Min(1) max_tokens?: number | null;
  @IsOptional() @IsInt() @Min(1) max_completion_tokens?: number | null;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number | null;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number | null;
  @IsOptional() @IsInt() @Min(1) @Max(128) n?: number | null;
  @IsOptional() @IsStopSequences() stop?: string | string[] | null;
  /** Passed through as sent (the backend checks each tool); OpenAI takes at most 128. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_TOOLS, { message: `must have at most ${MAX_TOOLS} tools (OpenAI's limit per request)` })
  tools?: unknown[] | null;
  @IsOptional() @IsBoolean() stream?: boolean | null;

  @IsOptional()
  @IsObject()
  @Satisfies((_v, o) => (o.stream === true ? null : "is only allowed when 'stream' is true"))
  @ValidateNested()
  @Type(() => StreamOptionsDto)
  stream_options?: StreamOptionsDto | null;

  @IsOptional()
  @IsObject()
  @Satisfies((value, o) => {
    const thinking = value as ThinkingDto;
    // The same precedence as the adapters and the limits (max_completion_tokens, OpenAI's current name, wins).
    const limit = (o.max_completion_tokens ?? o.max_tokens) as number | null | undefined;
    if (
      thinking?.type !== 'enabled' ||
      typeof limit !== 'number' ||
      typeof thinking.budget_tokens !== 'number'
    )
      return null;
    const which = typeof o.max_completion_tokens === 'number' ? 'max_completion_tokens' : 'max_tokens';
    return thinking.budget_tokens < limit
      ? null
      : `budget_tokens (${thinking.budget_tokens}) must be smaller than ${which} (${limit})`;
  })
  @ValidateNested()
  @Type(() => ThinkingDto)
  thinking?: ThinkingDto | null;
}
