import { GatewayException } from '../../core/errors/gateway.exception';
import type { ChatMessage, ChatRequest } from '../../core/chat-request';
import { cacheControlOf } from '../../core/message-parts';
import type { ContentPart, FunctionCallItem, InputItem, MessageItem } from './dto/response-items';
import type { ResponsesRequestDto } from './dto/responses-request.dto';

/**
 * Budgets for `reasoning.effort` as the gateway's thinking option (then mapped per family as the thinking table
 * in docs/backends.md says; OpenAI-compatible `reasoning_effort` models get the effort back by the thresholds).
 */
export const EFFORT_BUDGETS: Record<string, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 32768,
};

/** A function's name in chat (namespaced tools flattened, as `<namespace>__<name>`) -> its Responses name. */
export type ToolNames = Map<string, { name: string; namespace?: string }>;

export interface TranslatedRequest {
  chat: ChatRequest;
  toolNames: ToolNames;
  /** Tool types a chat backend cannot run (hosted tools such as web_search): left out, named in a header. */
  droppedTools: string[];
}

/**
 * A Responses request (its conversation so far, then its own input) -> the gateway's chat request, for every
 * backend that does not serve the Responses API itself. `instructions` becomes the first system message (it is
 * not carried over from a previous response, as at OpenAI); developer messages become system messages; function
 * calls and their outputs become tool calls and tool messages; reasoning items are left out (no chat backend
 * takes them back); `reasoning.effort` becomes the thinking option; `text.format` becomes `response_format`.
 */
export function responsesToChat(dto: ResponsesRequestDto, items: InputItem[]): TranslatedRequest {
  checkCallPairs(items);
  const messages: ChatMessage[] = [];
  if (dto.instructions) messages.push({ role: 'system', content: dto.instructions });
  for (const item of items) {
    if (item.type === 'function_call') appendCall(messages, item);
    else if (item.type === 'function_call_output') {
      messages.push({
        role: 'tool',
        tool_call_id: item.call_id,
        content: typeof item.output === 'string' ? item.output : textOf(item.output),
      });
    } else if (item.type === 'message' || item.type === undefined)
      messages.push(messageOf(item as MessageItem));
  }
  const chat: ChatRequest = { model: dto.model, messages };
  if (dto.stream === true) chat.stream = true;
  if (typeof dto.max_output_tokens === 'number') chat.max_completion_tokens = dto.max_output_tokens;
  if (typeof dto.temperature === 'number') chat.temperature = dto.temperature;
  if (typeof dto.top_p === 'number') chat.top_p = dto.top_p;
  if (typeof dto.user === 'string') chat.user = dto.user;
  // Chat completions takes it too (OpenAI's prompt-cache routing hint); the other families build their bodies
  // from scratch and leave it out.
  if (typeof dto.prompt_cache_key === 'string') chat.prompt_cache_key = dto.prompt_cache_key;
  if (typeof dto.parallel_tool_calls === 'boolean') chat.parallel_tool_calls = dto.parallel_tool_calls;
  const format = dto.text?.format;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema') {
    chat.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.strict != null ? { strict: format.strict } : {}),
        ...(format.description ? { description: format.description } : {}),
      },
    };
  }
  const effort = dto.reasoning?.effort;
  if (effort === 'none') chat.thinking = { type: 'disabled' };
  else if (effort) {
    const budget = Math.min(EFFORT_BUDGETS[effort], (dto.max_output_tokens ?? Infinity) - 1);
    if (budget >= 1) chat.thinking = { type: 'enabled', budget_tokens: budget };
  }
  const { tools, toolNames, droppedTools } = chatTools(dto.tools ?? []);
  if (tools.length) {
    chat.tools = tools;
    const choice = toolChoiceOf(dto.tool_choice, toolNames);
    if (choice !== undefined) chat.tool_choice = choice;
  }
  return { chat, toolNames, droppedTools };
}

function chatTools(tools: Array<Record<string, unknown>>): {
  tools: unknown[];
  toolNames: ToolNames;
  droppedTools: string[];
} {
  const out: unknown[] = [];
  const toolNames: ToolNames = new Map();
  const dropped = new Set<string>();
  const add = (tool: Record<string, unknown>, namespace?: string) => {
    const name = String(tool.name);
    const chatName = namespace ? `${namespace}__${name}` : name;
    toolNames.set(chatName, { name, ...(namespace ? { namespace } : {}) });
    const fn: Record<string, unknown> = {
      name: chatName,
      parameters: tool.parameters ?? { type: 'object', properties: {} },
    };
    if (typeof tool.description === 'string') fn.description = tool.description;
    if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
    out.push({ type: 'function', function: fn });
  };
  for (const tool of tools) {
    if (tool.type === 'function') add(tool);
    else if (tool.type === 'namespace') {
      for (const inner of tool.tools as Array<Record<string, unknown>>) {
        if (inner?.type === 'function') add(inner, String(tool.name));
        else dropped.add(String(inner?.type));
      }
    } else dropped.add(String(tool.type));
  }
  return { tools: out, toolNames, droppedTools: [...dropped] };
}

function toolChoiceOf(choice: ResponsesRequestDto['tool_choice'], names: ToolNames): unknown {
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && typeof choice.name === 'string') {
    const chatName =
      [...names].find(
        ([, known]) => known.name === choice.name && known.namespace === (choice.namespace ?? undefined),
      )?.[0] ?? choice.name;
    return { type: 'function', function: { name: chatName } };
  }
  return 'auto'; // allowed_tools, or a hosted tool the backend does not have: let the model choose
}

/** Consecutive function calls are one assistant turn with several tool calls, as chat has them. */
function appendCall(messages: ChatMessage[], item: FunctionCallItem): void {
  const call = {
    id: item.call_id,
    type: 'function',
    function: {
      name: item.namespace ? `${item.namespace}__${item.name}` : item.name,
      arguments: item.arguments,
    },
  };
  const last = messages[messages.length - 1];
  // `last` is a message this translation made; appended to in place (a copy per call was quadratic in the calls).
  if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
  else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function messageOf(item: MessageItem): ChatMessage {
  const role = item.role === 'developer' ? 'system' : item.role;
  if (typeof item.content === 'string') return { role, content: item.content };
  // A system prompt whose text parts carry cache breakpoints keeps them as text parts (as chat takes them).
  if (role === 'system' && item.content.some((part) => cacheControlOf(part)))
    return { role, content: item.content.filter((part) => typeof part.text === 'string').map(partOf) };
  if (role !== 'user') return { role, content: textOf(item.content) };
  const parts = item.content.map(partOf);
  return {
    role,
    content:
      parts.every((part) => part.type === 'text') && !parts.some((part) => part.cache_control)
        ? parts.map((part) => part.text as string).join('\n')
        : parts,
  };
}

function partOf(part: ContentPart): Record<string, unknown> {
  if (part.type === 'input_text' || part.type === 'output_text') {
    // Anthropic's cache breakpoint, when the client put one on its text (as chat SDKs do): kept for Claude.
    const cacheControl = cacheControlOf(part);
    return {
      type: 'text',
      text: String(part.text ?? ''),
      ...(cacheControl ? { cache_control: cacheControl } : {}),
    };
  }
  if (part.type === 'input_image' && typeof part.image_url === 'string')
    return {
      type: 'image_url',
      image_url: {
        url: part.image_url,
        ...(part.detail && part.detail !== 'original' ? { detail: part.detail } : {}),
      },
    };
  if (part.type === 'input_file' && typeof part.file_data === 'string')
    return {
      type: 'file',
      file: { file_data: part.file_data, ...(part.filename ? { filename: part.filename } : {}) },
    };
  throw new GatewayException(
    'invalid_request',
    `Input part "${part.type}" needs OpenAI's own file store (file_id / file_url); send the data inline.`,
    { param: 'input', wireCode: null },
  );
}

export function textOf(parts: ContentPart[]): string {
  return parts
    .map((part) =>
      typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '',
    )
    .join('');
}

/** OpenAI's own checks: every function call has its output in the same input, and every output has its call. */
function checkCallPairs(items: InputItem[]): void {
  const calls = new Set(
    items.filter((item) => item.type === 'function_call').map((item) => (item as FunctionCallItem).call_id),
  );
  const outputs = new Set(
    items.filter((item) => item.type === 'function_call_output').map((item) => item.call_id),
  );
  for (const id of outputs) {
    if (!calls.has(id))
      throw new GatewayException(
        'invalid_request',
        `No tool call found for function call output with call_id ${id}.`,
        { param: 'input', wireCode: null },
      );
  }
  for (const id of calls) {
    if (!outputs.has(id))
      throw new GatewayException('invalid_request', `No tool output found for function call ${id}.`, {
        param: 'input',
        wireCode: null,
      });
  }
}
