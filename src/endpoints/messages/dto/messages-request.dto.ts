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
import { Satisfies } from '../../../common/validation/satisfies';
import { contentProblem, type ContentBlock } from './message-blocks';

/**
 * Anthropic's limit on `messages` per request. The gateway's own limit on a body's values (json-shape.ts) is
 * lower in practice (100,000 messages are at least 300,000 values); this holds should that one be raised.
 */
export const MAX_MESSAGES = 100_000;

export class MessageParamDto {
  // `system` inside messages is newer (Claude Code sends it for some models); Anthropic decides per model.
  @IsIn(['user', 'assistant', 'system'], { message: 'must be "user" or "assistant"' }) role!:
    'user' | 'assistant' | 'system';
  @Satisfies((value) => contentProblem(value)) content!: string | ContentBlock[];
}

export class MessagesThinkingDto {
  [passthrough: string]: unknown;
  @IsIn(['enabled', 'disabled', 'adaptive'], { message: 'must be "enabled", "disabled" or "adaptive"' })
  type!: 'enabled' | 'disabled' | 'adaptive';
  @ValidateIf((t: MessagesThinkingDto) => t.type === 'enabled')
  @IsInt()
  @Min(1024, { message: 'budget_tokens must be at least 1024' })
  budget_tokens?: number;
}

export class ToolChoiceDto {
  [passthrough: string]: unknown;
  @IsIn(['auto', 'any', 'tool', 'none'], { message: 'must be "auto", "any", "tool" or "none"' }) type!:
    'auto' | 'any' | 'tool' | 'none';
  @ValidateIf((c: ToolChoiceDto) => c.type === 'tool') @IsString() @IsNotEmpty() name?: string;
  @IsOptional() @IsBoolean() disable_parallel_tool_use?: boolean;
}

/** POST /v1/messages/count_tokens (the prompt without max_tokens or stream); POST /v1/messages adds those. */
export class MessagesPromptDto {
  [passthrough: string]: unknown;

  @IsString() @IsNotEmpty() model!: string;

  @IsArray()
  @ArrayMinSize(1, { message: 'must contain at least one message' })
  @ArrayMaxSize(MAX_MESSAGES, {
    message: `must contain at most ${MAX_MESSAGES} messages (Anthropic's limit per request)`,
  })
  @ValidateNested({ each: true })
  @Type(() => MessageParamDto)
  messages!: MessageParamDto[];

  @IsOptional() @Satisfies((value) => contentProblem(value, true)) system?: string | ContentBlock[];
  @IsOptional() @IsArray() @Satisfies((tools) => toolsProblem(tools)) tools?: Array<Record<string, unknown>>;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => ToolChoiceDto) tool_choice?: ToolChoiceDto;

  @IsOptional()
  @IsObject()
  @Satisfies((value, o) => {
    const thinking = value as MessagesThinkingDto;
    if (
      thinking?.type !== 'enabled' ||
      typeof o.max_tokens !== 'number' ||
      typeof thinking.budget_tokens !== 'number'
    )
      return null;
    return thinking.budget_tokens < o.max_tokens
      ? null
      : `budget_tokens (${thinking.budget_tokens}) must be less than max_tokens (${o.max_tokens})`;
  })
  @ValidateNested()
  @Type(() => MessagesThinkingDto)
  thinking?: MessagesThinkingDto;

  @IsOptional() @IsObject() output_config?: { effort?: string; [key: string]: unknown };
}

/** POST /v1/messages. Fields not declared here are kept and reach Anthropic backends unchanged. */
export class MessagesRequestDto extends MessagesPromptDto {
  @IsInt() @Min(1) max_tokens!: number;
  @IsOptional() @IsBoolean() stream?: boolean;
  @IsOptional() @IsNumber() @Min(0) @Max(1) temperature?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number;
  @IsOptional() @IsInt() @Min(0) top_k?: number;
  @IsOptional() @IsArray() @IsString({ each: true }) stop_sequences?: string[];
  @IsOptional() @IsObject() metadata?: { user_id?: string | null };
}

function toolsProblem(tools: unknown): string | null {
  if (!Array.isArray(tools)) return null;
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i] as Record<string, unknown> | null;
    if (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string' || !tool.name)
      return `[${i}].name: Field required`;
    // Server tools (web_search_...) have a `type` and no schema; custom tools need one.
    if (
      (tool.type === undefined || tool.type === 'custom') &&
      (typeof tool.input_schema !== 'object' || tool.input_schema === null)
    ) {
      return `[${i}].input_schema: Field required`;
    }
  }
  return null;
}
