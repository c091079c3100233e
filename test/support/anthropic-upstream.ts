import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  generate,
  requestedToolCall,
  StandInServer,
  wait,
  words,
  type RecordedRequest,
} from './standin-server';
import { cacheCountsOf } from './cache-usage';

/**
 * A stand-in Anthropic Messages API, written from Anthropic's docs (see
 * ../shared/reference/wire-formats.md section D): `POST /v1/messages` with `x-api-key` and
 * `anthropic-version`; `max_tokens` and `messages` required; thinking needs budget_tokens >= 1024
 * and < max_tokens; errors are `{"type":"error","error":{type,message}}`; streams are
 * message_start, ping, content_block_start/delta/stop per block, message_delta, message_stop. Bodies and events
 * carry every member the SDK's types declare (@anthropic-ai/sdk 1.12: container, stop_details, diagnostics,
 * the whole usage, text citations, tool_use caller), as the gateway's own wire checks expect of Anthropic.
 * `POST /v1/messages/count_tokens` answers `{input_tokens}`. A replayed thinking block whose signature this
 * server did not make is a 400, as at Anthropic. A body member Anthropic does not define is a 400
 * (`<name>: Extra inputs are not permitted`), as Anthropic's validation answers it. Answers honour `max_tokens`
 * and `stop_sequences` (a token is a word): cut at the limit with stop_reason `max_tokens`, or before the first
 * stop sequence with stop_reason `stop_sequence` and `stop_sequence` naming it. Ids come from the seeded PRNG.
 *
 * Behaviour by model:
 *   claude-echo         answers "echo: <last user text>" (after a thinking block when thinking is on (enabled or adaptive),
 *                       or a tool_use block when tools are offered and the last turn is not a tool result: the tool and input
 *                       the user asked for with `call <Tool> with <JSON>`, else the first tool with {query});
 *                       usage reports 4 cache-read and 2 cache-write input tokens
 *   claude-cached-<reads>-<writes5m>-<writes1h> as claude-echo, its usage reporting the cache as Anthropic does:
 *                       `cache_read_input_tokens` <reads>, `cache_creation_input_tokens` <writes5m + writes1h> and
 *                       `cache_creation: {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`, `input_tokens` the
 *                       uncached rest (the prompt's words); a stream's message_delta repeats the counts (cumulative)
 *   claude-overloaded   HTTP 529 overloaded_error
 *   claude-midstream    streams one text delta, then an in-stream `error` event
 *   claude-refuser      starts the echo and stops after its first word with stop_reason `refusal` (Anthropic's
 *                       classifiers stopping an answer: what was written stays, the answer ends there)
 *   claude-sonnet-5-5 (and any model from Claude Opus 4.8 on) as claude-echo, and accepts a mid-conversation
 *                       `role: "system"` turn right after a user turn, as those models do; like every model from
 *                       Opus 4.7 on it refuses manual thinking budgets (adaptive thinking only) and sampling changes
 *   claude-parallel     with tools offered: one tool_use block per tool (at least two: the first tool twice when
 *                       only one is offered), each with its own id, stop_reason `tool_use`; then as claude-echo
 */

/**
 * Mid-conversation system turns: models from Claude Opus 4.8 on accept a `role: "system"` message right after a user
 * turn (Claude Code sends one to them); earlier models, and the behaviour-named stand-in models above, refuse any.
 */
const MID_CONVERSATION_SYSTEM = /^claude-(?:opus-4-8|(?:opus|sonnet|haiku|fable|mythos)-5)/;

function systemTurnsAccepted(model: unknown, messages: Array<{ role: string }>): boolean {
  return messages.every(
    (message, i) =>
      message.role !== 'system' ||
      (typeof model === 'string' && MID_CONVERSATION_SYSTEM.test(model) && messages[i - 1]?.role === 'user'),
  );
}

/**
 * Models that take only adaptive thinking (Opus 4.7/4.8, the 5 generation, Fable/Mythos): a manual
 * `{type: "enabled", budget_tokens}` is a 400, as are a temperature other than 1, top_p below 0.99 and any top_k
 * ("models released after Claude Opus 4.6"); Fable and Mythos cannot turn thinking off. Older models take
 * `adaptive` too (from Opus 4.6), and every model checks `output_config.effort` against Anthropic's values.
 */
const ADAPTIVE_ONLY = /^claude-(?:opus-4-[78]|(?:opus|sonnet|haiku)-5|fable|mythos)/;
const EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

function adaptiveOnlyProblem(body: Record<string, any>): string | null {
  const effort = body.output_config?.effort;
  if (effort !== undefined && !EFFORTS.has(effort))
    return `output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'`;
  if (typeof body.model !== 'string' || !ADAPTIVE_ONLY.test(body.model)) return null;
  if (body.thinking?.type === 'enabled')
    return `"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`;
  if (body.thinking?.type === 'disabled' && /^claude-(?:fable|mythos)/.test(body.model))
    return `"thinking.type.disabled" is not supported for this model.`;
  if (body.temperature !== undefined && body.temperature !== 1)
    return 'temperature: this model only supports temperature 1.0';
  if (body.top_p !== undefined && body.top_p < 0.99)
    return 'top_p: this model only supports top_p values of 0.99 or higher';
  if (body.top_k !== undefined) return 'top_k: this model does not support top_k';
  return null;
}

/** The members of a Messages request body (MessageCreateParams, @anthropic-ai/sdk 1.12, beta members included). */
const MESSAGES_MEMBERS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_k',
  'top_p',
  'thinking',
  'tool_choice',
  'tools',
  'service_tier',
  'container',
  'context_management',
  'mcp_servers',
  'output_config',
  'output_format',
  'inference_geo',
  'speed',
  'cache_control',
  'diagnostics',
  'billing_policy',
  'compaction',
  'fallback_credit_token',
  'fallbacks',
  'thread',
]);

/** The members of a count_tokens body (MessageCountTokensParams): no max_tokens, stream, sampling or metadata. */
const COUNT_TOKENS_MEMBERS = new Set([
  'model',
  'messages',
  'system',
  'thinking',
  'tool_choice',
  'tools',
  'context_management',
  'mcp_servers',
  'output_config',
  'output_format',
  'speed',
  'cache_control',
  'billing_policy',
  'compaction',
]);
export class AnthropicUpstream extends StandInServer {
  get url(): string {
    return `${this.origin}/v1`;
  }

  protected async handle(
    recorded: RecordedRequest,
    _req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const { path, headers, body } = recorded;
    if (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')
      return error(res, 404, 'not_found_error', 'Not found');
    if (headers['x-api-key'] !== 'upstream-secret-key')
      return error(res, 401, 'authentication_error', 'invalid x-api-key');
    if (!headers['anthropic-version'])
      return error(res, 400, 'invalid_request_error', 'anthropic-version header is required');
    // As Anthropic's request validation: each message an object with a role and string-or-blocks content.
    const malformed = messageProblem(body.messages);
    if (malformed) return error(res, 400, 'invalid_request_error', malformed);
    const members = path === '/v1/messages' ? MESSAGES_MEMBERS : COUNT_TOKENS_MEMBERS;
    const extra = Object.keys(body).find((name) => !members.has(name));
    if (extra) return error(res, 400, 'invalid_request_error', `${extra}: Extra inputs are not permitted`);
    // Thinking blocks replayed from earlier turns must carry a signature this server made.
    for (const [i, message] of (Array.isArray(body.messages) ? body.messages : []).entries()) {
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (block.type === 'thinking' && !String(block.signature).startsWith('sig-'))
          return error(
            res,
            400,
            'invalid_request_error',
            `messages.${i}.content: Invalid \`signature\` in \`thinking\` block`,
          );
      }
    }
    if (path === '/v1/messages/count_tokens') {
      if (!Array.isArray(body.messages))
        return error(res, 400, 'invalid_request_error', 'messages: Field required');
      const counted =
        body.messages.reduce(
          (n: number, m: { content: unknown }) => n + words(JSON.stringify(m.content)),
          0,
        ) + words(JSON.stringify(body.system ?? ''));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: counted }));
      return;
    }
    if (typeof body.max_tokens !== 'number')
      return error(res, 400, 'invalid_request_error', 'max_tokens: Field required');
    if (!Array.isArray(body.messages))
      return error(res, 400, 'invalid_request_error', 'messages: Field required');
    // Anthropic's own words for an empty conversation (a chat body with only a system message translates to one).
    if (body.messages.length === 0)
      return error(res, 400, 'invalid_request_error', 'messages: at least one message is required');
    if (!systemTurnsAccepted(body.model, body.messages))
      return error(res, 400, 'invalid_request_error', 'messages: Unexpected role "system"');
    const adaptiveProblem = adaptiveOnlyProblem(body);
    if (adaptiveProblem) return error(res, 400, 'invalid_request_error', adaptiveProblem);
    const thinking = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
    if (
      body.thinking?.type === 'enabled' &&
      (body.thinking.budget_tokens < 1024 || body.thinking.budget_tokens >= body.max_tokens)
    ) {
      return error(
        res,
        400,
        'invalid_request_error',
        'thinking.budget_tokens: must be >= 1024 and less than max_tokens',
      );
    }
    if (body.model === 'claude-overloaded') return error(res, 529, 'overloaded_error', 'Overloaded');

    const last = body.messages[body.messages.length - 1];
    const lastBlocks: Array<Record<string, any>> =
      typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
    const toolResult = lastBlocks.find((b) => b.type === 'tool_result');
    const userText = lastBlocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join(' ');
    const blocks: Array<Record<string, any>> = [];
    if (thinking)
      blocks.push({
        type: 'thinking',
        thinking: `Let me think about ${userText || 'the tool result'}.`,
        signature: `sig-${Buffer.from(userText).toString('base64')}`,
      });
    let stopReason = 'end_turn';
    let stopSequence: string | null = null;
    const answer = (text: string) => {
      const made = generate(text, { maxTokens: body.max_tokens, stops: body.stop_sequences });
      if (made.ended === 'max_tokens') stopReason = 'max_tokens';
      if (made.ended === 'stop_sequence') [stopReason, stopSequence] = ['stop_sequence', made.stop!];
      blocks.push({ type: 'text', text: made.text, citations: null });
    };
    const offered = Array.isArray(body.tools) && body.tools.length && body.tool_choice?.type !== 'none';
    if (toolResult)
      answer(
        `tool said: ${typeof toolResult.content === 'string' ? toolResult.content : JSON.stringify(toolResult.content)}`,
      );
    else if (offered && body.model === 'claude-parallel') {
      const tools: Array<{ name: string }> =
        body.tools.length > 1 ? body.tools : [body.tools[0], body.tools[0]];
      for (const [i, tool] of tools.entries())
        blocks.push({
          type: 'tool_use',
          id: this.id('toolu_01', 22),
          name: tool.name,
          input: { query: userText, call: i + 1 },
          caller: { type: 'direct' },
        });
      stopReason = 'tool_use';
    } else if (offered) {
      const asked = requestedToolCall(userText);
      blocks.push({
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: asked?.name ?? body.tools[0].name,
        input: asked?.input ?? { query: userText },
        caller: { type: 'direct' },
      });
      stopReason = 'tool_use';
    } else if (body.model === 'claude-refuser') {
      blocks.push({ type: 'text', text: 'echo: ', citations: null });
      stopReason = 'refusal';
    } else answer(`echo: ${userText}`);

    const inputWords =
      body.messages.reduce((n: number, m: { content: unknown }) => n + words(JSON.stringify(m.content)), 0) +
      words(String(body.system ?? ''));
    const outputTokens = blocks.reduce(
      (n, b) => n + words(String(b.text ?? b.thinking ?? JSON.stringify(b.input ?? ''))),
      0,
    );
    const cache = cacheCountsOf(body.model) ?? { reads: 4, writes5m: 2, writes1h: 0 };
    const usage = {
      input_tokens: inputWords,
      cache_creation_input_tokens: cache.writes5m + cache.writes1h,
      cache_read_input_tokens: cache.reads,
      output_tokens: outputTokens,
      cache_creation: {
        ephemeral_5m_input_tokens: cache.writes5m,
        ephemeral_1h_input_tokens: cache.writes1h,
      },
      inference_geo: 'us',
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: 'standard',
      speed: 'standard',
    };
    recorded.toolCallIds = blocks.filter((b) => b.type === 'tool_use').map((b) => String(b.id));
    recorded.usage = usage;
    const message = {
      id: this.id('msg_01', 22),
      type: 'message',
      role: 'assistant',
      model: `${body.model}-20250514`,
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: stopSequence,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage,
    };

    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_standin' });
      res.end(JSON.stringify(message));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (event: string, data: object) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    send('message_start', {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    send('ping', {});
    for (const [index, block] of blocks.entries()) {
      if (block.type === 'thinking') {
        send('content_block_start', {
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        });
        for (const word of block.thinking.split(/(?<= )/))
          send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: word } });
        send('content_block_delta', {
          index,
          delta: { type: 'signature_delta', signature: block.signature },
        });
      } else if (block.type === 'tool_use') {
        send('content_block_start', { index, content_block: { ...block, input: {} } });
        const json = JSON.stringify(block.input);
        send('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(0, 5) },
        });
        send('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(5) },
        });
      } else {
        send('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } });
        for (const [i, word] of block.text.split(/(?<= )/).entries()) {
          send('content_block_delta', { index, delta: { type: 'text_delta', text: word } });
          if (body.model === 'claude-midstream' && i === 0) {
            await wait(10);
            send('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
            res.end();
            return;
          }
        }
      }
      send('content_block_stop', { index });
    }
    const {
      input_tokens,
      cache_creation_input_tokens,
      cache_read_input_tokens,
      output_tokens_details,
      server_tool_use,
    } = usage;
    send('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: stopSequence, stop_details: null, container: null },
      usage: {
        input_tokens,
        cache_creation_input_tokens,
        cache_read_input_tokens,
        output_tokens: outputTokens,
        output_tokens_details,
        server_tool_use,
      },
    });
    send('message_stop', {});
    res.end();
  }
}

function error(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'request-id': 'req_standin',
    ...(status === 429 ? { 'retry-after': '3' } : {}),
  });
  res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_standin' }));
}

/** What Anthropic's validation would say about `messages` (absent is left to each route), or null. */
function messageProblem(messages: unknown): string | null {
  if (messages === undefined) return null;
  if (!Array.isArray(messages)) return 'messages: Input should be a valid list';
  for (const [i, message] of messages.entries()) {
    if (typeof message !== 'object' || message === null || Array.isArray(message))
      return `messages.${i}: Input should be a valid dictionary or object to extract fields from`;
    const { content } = message as { content?: unknown };
    if (typeof content === 'string') continue;
    if (!Array.isArray(content)) return `messages.${i}.content: Input should be a valid string or list`;
    const bad = content.findIndex(
      (block) =>
        typeof block !== 'object' ||
        block === null ||
        Array.isArray(block) ||
        typeof (block as { type?: unknown }).type !== 'string',
    );
    if (bad >= 0)
      return `messages.${i}.content.${bad}: Input should be a valid dictionary or object to extract fields from`;
  }
  return null;
}
