import type { ChatRequest } from '../../core/chat-request';
import type { CallTarget } from '../provider-adapter';
import { constraint, requestedMaxTokens, requestedThinking } from '../shared/reasoning';
import {
  canDisableThinking,
  effortOfBudget,
  effortOfReasoningEffort,
  needsAdaptiveThinking,
  REASONING_EFFORTS,
  type AnthropicEffort,
} from './anthropic-models';
import {
  cacheControlOf,
  functionTools,
  messageCacheControl,
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
  if (needsAdaptiveThinking(target.upstreamModel)) return validateForAdaptiveModel(request, target);
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
  refuseForcedToolUse(request);
}

/**
 * Models that take only adaptive thinking (anthropic-models.ts): no budget rules (a budget becomes an effort), but
 * their sampling rules hold whether or not the client asks for reasoning: temperature 1 only, top_p >= 0.99, no
 * top_k; and no forced tool use while they think.
 */
function validateForAdaptiveModel(request: ChatRequest, target: CallTarget): void {
  const model = target.upstreamModel;
  if (request.temperature !== undefined && request.temperature !== null && request.temperature !== 1)
    throw constraint(`Anthropic allows only temperature 1 (or none) on ${model}.`, 'temperature');
  if (typeof request.top_p === 'number' && request.top_p < 0.99)
    throw constraint(`Anthropic allows top_p only between 0.99 and 1 on ${model}.`, 'top_p');
  if (request.top_k !== undefined && request.top_k !== null)
    throw constraint(`Anthropic does not allow top_k on ${model}.`, 'top_k');
  if (target.model.thinking !== 'native') return;
  const plan = adaptivePlan(request, model);
  if (plan?.type === 'adaptive' || (plan === undefined && !canDisableThinking(model)))
    refuseForcedToolUse(request);
}

function refuseForcedToolUse(request: ChatRequest): void {
  const choice = toolChoiceOf(request.tool_choice);
  if (choice?.mode === 'required' || choice?.mode === 'function') {
    throw constraint(
      'Anthropic does not allow forced tool use (tool_choice "required" or a named function) with thinking enabled.',
      'tool_choice',
    );
  }
}

type AdaptivePlan = { type: 'adaptive'; effort: AnthropicEffort } | { type: 'disabled' };

/**
 * What an adaptive-only model is sent for the client's reasoning request: the gateway's `thinking` option when
 * present (a budget becomes the nearest effort), else OpenAI's `reasoning_effort`; `disabled` where reasoning is
 * off, except on models that cannot stop thinking (nothing is sent: they think anyway). An unknown
 * `reasoning_effort` is a 400.
 */
function adaptivePlan(request: ChatRequest, model: string): AdaptivePlan | undefined {
  const budget = requestedThinking(request);
  let wanted: AnthropicEffort | 'off' | undefined;
  if (typeof budget === 'number') wanted = effortOfBudget(budget);
  else if (budget === false) wanted = 'off';
  else if (request.reasoning_effort !== undefined && request.reasoning_effort !== null) {
    const value = request.reasoning_effort;
    wanted = typeof value === 'string' ? effortOfReasoningEffort(value) : undefined;
    if (wanted === undefined)
      throw constraint(
        `reasoning_effort must be one of ${REASONING_EFFORTS.map((e) => `'${e}'`).join(', ')}.`,
        'reasoning_effort',
      );
  }
  if (wanted === undefined) return undefined;
  if (wanted === 'off') return canDisableThinking(model) ? { type: 'disabled' } : undefined;
  return { type: 'adaptive', effort: wanted };
}

/** OpenAI chat request -> Anthropic Messages request body. */
export function toAnthropicBody(
  request: ChatRequest,
  target: CallTarget,
  stream: boolean,
): Record<string, unknown> {
  const messages = request.messages as unknown as OpenAIMessage[];
  const systemMessages = messages.filter((m) => m.role === 'system' || m.role === 'developer');
  const system = systemMessages.map((m) => textOf(m.content)).filter(Boolean);
  const turns = mergeSameRole<Turn, Block>(
    messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map(toTurn),
  );
  const body: Record<string, unknown> = {
    model: target.upstreamModel,
    max_tokens: requestedMaxTokens(request) ?? target.model.maxTokens,
    messages: turns.map(({ role, blocks }) => ({ role, content: blocks })),
  };
  // A system prompt with cache breakpoints goes as blocks, each keeping its own; otherwise as one text, as always.
  const systemBlocks = systemMessages.flatMap(systemBlocksOf);
  if (systemBlocks.some((block) => block.cache_control)) body.system = systemBlocks;
  else if (system.length) body.system = system.join('\n\n');
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
      ...(tool.cacheControl ? { cache_control: tool.cacheControl } : {}),
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

  if (target.model.thinking === 'native') applyThinking(body, request, target.upstreamModel);
  return body;
}

/** `thinking` (and `output_config.effort`) by the model: adaptive-only models get an effort, older ones a budget. */
function applyThinking(body: Record<string, unknown>, request: ChatRequest, model: string): void {
  if (needsAdaptiveThinking(model)) {
    const plan = adaptivePlan(request, model);
    if (plan?.type === 'adaptive') {
      body.thinking = { type: 'adaptive' };
      body.output_config = { effort: plan.effort };
    } else if (plan?.type === 'disabled') body.thinking = { type: 'disabled' };
    return;
  }
  const budget = requestedThinking(request);
  if (typeof budget === 'number') body.thinking = { type: 'enabled', budget_tokens: budget };
  else if (budget === false) body.thinking = { type: 'disabled' };
}

/**
 * A system message's text as blocks: each text part its own block with its cache breakpoint, a breakpoint on the
 * message itself on its last block.
 */
function systemBlocksOf(message: OpenAIMessage): Block[] {
  const blocks: Block[] = partsOf(message.content)
    .filter((part) => part.type === 'text' && typeof (part as { text?: unknown }).text === 'string')
    .filter((part) => (part as { text: string }).text)
    .map((part) => marked({ type: 'text', text: (part as { text: string }).text }, cacheControlOf(part)));
  const own = cacheControlOf(message);
  if (own && blocks.length) blocks[blocks.length - 1] = marked(blocks[blocks.length - 1], own);
  return blocks;
}

/** The block with Anthropic's `cache_control`, when the chat message or part carried one. */
function marked(block: Block, cacheControl: Record<string, unknown> | undefined): Block {
  return cacheControl ? { ...block, cache_control: cacheControl } : block;
}

/**
 * A chat message as a turn, its cache breakpoints kept (chat SDKs put Anthropic's `cache_control` on content parts
 * or on the message): a part's on its block, a message's on its last block; an assistant or tool message's text is
 * one block, which takes the breakpoint of any of its parts.
 */
function toTurn(message: OpenAIMessage): Turn {
  const turn = unmarkedTurn(message);
  const own = message.role === 'user' ? cacheControlOf(message) : messageCacheControl(message);
  const last = turn.blocks.length - 1;
  if (
    own &&
    last >= 0 &&
    turn.blocks[last].type !== 'thinking' &&
    turn.blocks[last].type !== 'redacted_thinking'
  )
    turn.blocks[last] = marked(turn.blocks[last], own);
  return turn;
}

function unmarkedTurn(message: OpenAIMessage): Turn {
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
      blocks.push(marked({ type: 'text', text: (part as { text: string }).text }, cacheControlOf(part)));
    else if (part.type === 'image_url')
      blocks.push(marked(imageBlock(part as ImagePart), cacheControlOf(part)));
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
