import type { ChatMessage, ChatRequest } from '../../core/chat-request';
import type { ContentPart, ToolCall } from '../../core/message-parts';
import type {
  ContentBlock,
  DocumentBlock,
  ImageBlock,
  TextBlock,
  ToolResultBlock,
  ToolUseBlock,
} from './dto/message-blocks';
import type { MessagesPromptDto, MessagesRequestDto } from './dto/messages-request.dto';

/**
 * Budgets for `thinking: {type: "adaptive"}` by `output_config.effort` (adaptive means "the model decides";
 * families without adaptive thinking get a budget, then mapped as the thinking table in docs/backends.md says).
 * Anthropic's default effort is high.
 */
export const ADAPTIVE_BUDGETS: Record<string, number> = { low: 2048, medium: 8192, high: 16384, max: 32768 };

/**
 * Claude Code puts `x-anthropic-billing-header: cc_version=...; cch=<per-request hash>;` first in `system`.
 * Anthropic strips it; for any other backend it would make every prompt's prefix unique and defeat their prefix
 * caches, so translation drops that line.
 */
const BILLING_HEADER = /^x-anthropic-billing-header:[^\n]*\n?/;

/**
 * A Messages request -> the gateway's chat request, for every family that does not speak Messages itself.
 * `system` becomes the first system message; tool results become tool messages; an assistant's tool_use blocks
 * become tool_calls; thinking blocks from earlier turns are dropped (no chat backend takes them back);
 * `thinking` becomes the gateway's own thinking option; `top_k` has no chat equivalent and is dropped.
 */
export function messagesToChat(dto: MessagesRequestDto): ChatRequest {
  const request: ChatRequest = { model: dto.model, messages: chatMessages(dto), max_tokens: dto.max_tokens };
  if (dto.stream === true) request.stream = true;
  if (typeof dto.temperature === 'number') request.temperature = dto.temperature;
  if (typeof dto.top_p === 'number') request.top_p = dto.top_p;
  if (dto.stop_sequences?.length) request.stop = dto.stop_sequences;
  if (typeof dto.metadata?.user_id === 'string') request.user = dto.metadata.user_id;
  Object.assign(request, toolFields(dto));
  const thinking = thinkingOf(dto, dto.max_tokens);
  if (thinking) request.thinking = thinking;
  return request;
}

/** The prompt part (count_tokens has no max_tokens): messages, system and tools as chat messages and tools. */
export function chatMessages(dto: MessagesPromptDto): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const system = typeof dto.system === 'string' ? dto.system : textOf(dto.system ?? []);
  const trimmed = system.replace(BILLING_HEADER, '');
  if (trimmed) messages.push({ role: 'system', content: trimmed });
  for (const message of dto.messages) {
    const blocks: ContentBlock[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (message.role === 'system')
      messages.push({ role: 'system', content: textOf(blocks).replace(BILLING_HEADER, '') });
    else if (message.role === 'assistant') messages.push(assistantMessage(blocks));
    else messages.push(...userMessages(blocks));
  }
  return messages;
}

export function toolFields(dto: MessagesPromptDto): Partial<ChatRequest> {
  const out: Partial<ChatRequest> = {};
  // Server tools (web search and friends, `type` other than custom) run at Anthropic only: dropped here. So are
  // tools with `defer_loading: true`: Anthropic keeps them out of the model's context until a tool search finds
  // them (Claude Code's ToolSearch loads them into a later request's list), so the model must not see them here
  // either. Claude Code always sends one, DeferredToolPlaceholder ("never call this tool"), which a small model
  // forced to call a tool picked and then looped on.
  const tools = (dto.tools ?? []).filter(
    (tool) =>
      (tool.type === undefined || tool.type === 'custom') && tool.input_schema && tool.defer_loading !== true,
  );
  if (tools.length) {
    out.tools = tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
        parameters: tool.input_schema,
      },
    }));
  }
  const choice = dto.tool_choice;
  if (choice && tools.length) {
    if (choice.type === 'auto') out.tool_choice = 'auto';
    else if (choice.type === 'any') out.tool_choice = 'required';
    else if (choice.type === 'none') out.tool_choice = 'none';
    else if (choice.type === 'tool') out.tool_choice = { type: 'function', function: { name: choice.name } };
    if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  }
  return out;
}

/** `thinking` as the gateway's option: a budget below max_tokens (adaptive gets one by effort), or off. */
export function thinkingOf(
  dto: MessagesPromptDto,
  maxTokens: number | undefined,
): ChatRequest['thinking'] | undefined {
  const thinking = dto.thinking;
  if (!thinking) return undefined;
  if (thinking.type === 'disabled') return { type: 'disabled' };
  const wanted =
    thinking.type === 'enabled'
      ? thinking.budget_tokens!
      : (ADAPTIVE_BUDGETS[String(dto.output_config?.effort ?? 'high')] ?? ADAPTIVE_BUDGETS.high);
  const budget = maxTokens === undefined ? wanted : Math.min(wanted, maxTokens - 1);
  return budget >= 1 ? { type: 'enabled', budget_tokens: budget } : undefined;
}

function assistantMessage(blocks: ContentBlock[]): ChatMessage {
  const text = textOf(blocks);
  const toolCalls: ToolCall[] = blocks
    .filter((block): block is ToolUseBlock => block.type === 'tool_use')
    .map((block) => ({
      id: block.id,
      type: 'function',
      function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
    }));
  const message: ChatMessage = { role: 'assistant', content: text || (toolCalls.length ? null : '') };
  if (toolCalls.length) message.tool_calls = toolCalls;
  return message;
}

/** A user turn: its tool results first (as tool messages, which must follow the assistant's calls), then the rest. */
function userMessages(blocks: ContentBlock[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') out.push(toolMessage(block as ToolResultBlock));
    else parts.push(...partsOf(block));
  }
  if (parts.length)
    out.push({
      role: 'user',
      content: parts.every((part) => part.type === 'text')
        ? parts.map((part) => (part as { text: string }).text).join('\n')
        : (parts as unknown as Array<Record<string, unknown>>),
    });
  return out;
}

function toolMessage(block: ToolResultBlock): ChatMessage {
  const content = typeof block.content === 'string' ? block.content : textOf(block.content ?? []);
  return {
    role: 'tool',
    tool_call_id: block.tool_use_id,
    content: block.is_error === true ? `Error: ${content}` : content,
  };
}

/** One user block -> chat content parts (text, image_url, file); blocks with no chat equivalent are dropped. */
function partsOf(block: ContentBlock): ContentPart[] {
  if (block.type === 'text') return [{ type: 'text', text: String(block.text) }];
  if (block.type === 'image') {
    const source = (block as ImageBlock).source as Record<string, unknown>;
    if (source.type === 'base64')
      return [
        {
          type: 'image_url',
          image_url: { url: `data:${String(source.media_type)};base64,${String(source.data)}` },
        },
      ];
    if (source.type === 'url') return [{ type: 'image_url', image_url: { url: String(source.url) } }];
    return [];
  }
  if (block.type === 'document') return documentParts(block as DocumentBlock);
  return [];
}

function documentParts(block: DocumentBlock): ContentPart[] {
  const { source } = block;
  const title = typeof block.title === 'string' ? `${block.title}\n` : '';
  if (source.type === 'text' && typeof source.data === 'string')
    return [{ type: 'text', text: title + source.data }];
  if (source.type === 'content' && Array.isArray(source.content))
    return [{ type: 'text', text: title + textOf(source.content as ContentBlock[]) }];
  if (source.type === 'base64' && typeof source.data === 'string') {
    return [
      {
        type: 'file',
        file: {
          filename: block.title ?? 'document.pdf',
          file_data: `data:${source.media_type ?? 'application/pdf'};base64,${source.data}`,
        },
      },
    ];
  }
  if (source.type === 'url' && typeof source.url === 'string')
    return [{ type: 'text', text: `${title}${source.url}` }];
  return [];
}

export function textOf(blocks: ContentBlock[]): string {
  return blocks
    .filter(
      (block): block is TextBlock => block.type === 'text' && typeof (block as TextBlock).text === 'string',
    )
    .map((block) => block.text)
    .join('\n');
}
