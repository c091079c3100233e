import type { ChatRequest } from '../../core/chat-request';
import type { CallTarget } from '../provider-adapter';
import { constraint, requestedMaxTokens, requestedThinking } from '../shared/reasoning';
import {
  functionTools,
  mergeSameRole,
  parseArguments,
  parseDataUrl,
  partsOf,
  textOf,
  toolChoiceOf,
  type ImagePart,
  type OpenAIMessage,
} from '../../core/message-parts';

type Block = Record<string, unknown>;
interface Turn {
  role: 'user' | 'assistant';
  blocks: Block[];
}

/** Anthropic's documented thinking rules, checked before any call so the client gets a clear 400. */
export function validateForAnthropic(request: ChatRequest, target: CallTarget): void {
  if ((request.n ?? 1) > 1) throw constraint('Anthropic models return one choice: `n` must be 1.', 'n');
  const budget = requestedThinking(request);
  if (typeof budget !== 'number') return;
  if (target.model.thinking !== 'native') return; // the shared check already refused it
  const maxTokens = requestedMaxTokens(request) ?? target.model.maxTokens;
  if (budget < 1024)
    throw constraint(
      `Anthropic requires thinking.budget_tokens >= 1024 (got ${budget}).`,
      'thinking.budget_tokens',
    );
  if (budget >= maxTokens) {
    throw constraint(
      `Anthropic requires thinking.budget_tokens (${budget}) to be less than max_tokens (${maxTokens}).`,
      'thinking.budget_tokens',
    );
  }
  if (request.temperature !== undefined && request.temperature !== null && request.temperature !== 1) {
    throw constraint('Anthropic allows only temperature 1 (or none) with thinking enabled.', 'temperature');
  }
  if (typeof request.top_p === 'number' && request.top_p < 0.95) {
    throw constraint('Anthropic allows top_p only between 0.95 and 1 with thinking enabled.', 'top_p');
  }
  const choice = toolChoiceOf(request.tool_choice);
  if (choice?.mode === 'required' || choice?.mode === 'function') {
    throw constraint(
      'Anthropic does not allow forced tool use (tool_choice "required" or a named function) with thinking enabled.',
      'tool_choice',
    );
  }
}

/** OpenAI chat request -> Anthropic Messages request body. */
export function toAnthropicBody(
  request: ChatRequest,
  target: CallTarget,
  stream: boolean,
): Record<string, unknown> {
  const messages = request.messages as unknown as OpenAIMessage[];
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .filter(Boolean);
  const turns = mergeSameRole<Turn, Block>(
    messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map(toTurn),
  );
  const body: Record<string, unknown> = {
    model: target.upstreamModel,
    max_tokens: requestedMaxTokens(request) ?? target.model.maxTokens,
    messages: turns.map(({ role, blocks }) => ({ role, content: blocks })),
  };
  if (system.length) body.system = system.join('\n\n');
  if (request.temperature !== undefined && request.temperature !== null)
    body.temperature = request.temperature;
  if (request.top_p !== undefined && request.top_p !== null) body.top_p = request.top_p;
  if (request.stop) body.stop_sequences = Array.isArray(request.stop) ? request.stop : [request.stop];
  if (stream) body.stream = true;
  if (typeof request.user === 'string') body.metadata = { user_id: request.user };

  const tools = functionTools(request.tools);
  if (tools.length) {
    body.tools = tools.map((tool) => ({
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      input_schema: tool.parameters ?? { type: 'object', properties: {} },
    }));
  }
  const choice = toolChoiceOf(request.tool_choice);
  const noParallel = request.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  if (choice?.mode === 'auto') body.tool_choice = { type: 'auto', ...noParallel };
  else if (choice?.mode === 'none') body.tool_choice = { type: 'none' };
  else if (choice?.mode === 'required') body.tool_choice = { type: 'any', ...noParallel };
  else if (choice?.mode === 'function') body.tool_choice = { type: 'tool', name: choice.name, ...noParallel };
  else if (tools.length && request.parallel_tool_calls === false)
    body.tool_choice = { type: 'auto', ...noParallel };

  const budget = requestedThinking(request);
  if (target.model.thinking === 'native' && typeof budget === 'number')
    body.thinking = { type: 'enabled', budget_tokens: budget };
  else if (target.model.thinking === 'native' && budget === false) body.thinking = { type: 'disabled' };
  return body;
}

function toTurn(message: OpenAIMessage): Turn {
  if (message.role === 'tool') {
    return {
      role: 'user',
      blocks: [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: textOf(message.content) }],
    };
  }
  if (message.role === 'assistant') {
    // Thinking blocks go back first and unchanged: Anthropic verifies their signatures.
    const blocks: Block[] = [...(message.thinking_blocks ?? [])];
    const text = textOf(message.content);
    if (text) blocks.push({ type: 'text', text });
    for (const call of message.tool_calls ?? []) {
      blocks.push({
        type: 'tool_use',
        id: call.id,
        name: call.function.name,
        input: parseArguments(call.function.arguments),
      });
    }
    return { role: 'assistant', blocks };
  }
  const blocks: Block[] = [];
  for (const part of partsOf(message.content)) {
    if (part.type === 'text' && (part as { text: string }).text)
      blocks.push({ type: 'text', text: (part as { text: string }).text });
    else if (part.type === 'image_url') blocks.push(imageBlock(part as ImagePart));
  }
  return { role: 'user', blocks };
}

function imageBlock(part: ImagePart): Block {
  const url = part.image_url.url;
  const inline = parseDataUrl(url);
  if (inline)
    return { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.data } };
  return { type: 'image', source: { type: 'url', url } };
}
