import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerResponses } from './openai-responses';
import {
  generate,
  REASONING,
  requestedToolCall,
  StandInServer,
  standInEmbedding,
  words,
  type RecordedRequest,
} from './standin-server';
import { cacheCountsOf } from './cache-usage';

/**
 * A stand-in OpenAI-compatible upstream that follows OpenAI's documented wire format
 * (openai-openapi CreateChatCompletionResponse / CreateChatCompletionStreamResponse):
 * - non-streaming: chat.completion with usage;
 * - streaming: a first chunk with delta.role + content "", content chunks, a final chunk with
 *   `delta: {}` and finish_reason, then (only if stream_options.include_usage) a usage chunk with
 *   `choices: []` while every other chunk carries `usage: null`, then `data: [DONE]`; every chunk (the usage
 *   chunk too) ends with an `obfuscation` padding string unless stream_options.include_obfuscation is false;
 * - errors: `{"error": {message, type, param, code}}` with the documented statuses;
 * - `POST /v1/responses`: OpenAI's Responses API (openai-responses.ts), for backends configured `responsesApi`
 *   (the models below that it knows: echo, tool-caller, parallel-caller, refuser, reasoner, failer, status-<code>).
 *
 * Answers honour `max_completion_tokens` / `max_tokens` (a token is a word: cut there, finish_reason `length`) and
 * `stop` (cut before the first stop sequence, finish_reason `stop`). Ids and random choices come from the seeded
 * PRNG (StandInServer.random).
 *
 * A chat body member OpenAI does not define is refused as OpenAI refuses it (400, "Unrecognized request argument
 * supplied: <name>"), except by models named `vllm-<model>`, which behave as <model> but take any member, as
 * vLLM does (it ignores what it does not know).
 *
 * What it does is chosen by the *upstream model name*, so each test routes a gateway model
 * to the behaviour it needs:
 *   echo            answers "echo: <last user message>" in words (one word per chunk)
 *   slow            like echo, but waits `delayMs` between chunks (default 50)
 *   hang            sends headers (streaming) or nothing, then never finishes
 *   hang-headers    sends nothing at all, streaming or not (a backend still reading the prompt)
 *   malformed       answers 200 with a body that is not JSON (a broken proxy in front of the backend)
 *   error-body      answers 200 with an error as its body, as OpenRouter documents for a failure after the model
 *                   started (`{"error": {"code": 502, "message", "metadata"}}`; streamed: the first data event)
 *   flaky-<p>       like echo, but answers 500 to p percent of requests, at random
 *   toggle          like echo while `failing` is false, 500 while it is true (a deployment that dies and recovers)
 *   status-<code>   answers HTTP <code> with an OpenAI error body (429 adds Retry-After: 7)
 *   leak-key        answers 400 with a message that quotes the Authorization header it got
 *   midstream-error streams two chunks then an in-band error event
 *   cut             streams two chunks then destroys the socket
 *   tool-caller     with `tools` offered and the last message not a tool result: calls the tool the user asked
 *                   for with `call <Tool> with <JSON>`, else the first tool with `{"query": <last user text>}` (streamed as OpenAI does: id and name first, then argument
 *                   fragments), finish_reason tool_calls; after a tool result: answers "tool said: <result>"
 *   refuser         refuses as OpenAI's models do: `message.refusal` (streamed as `delta.refusal`), content null,
 *                   finish_reason `stop`
 *   filtered        the echo's first word, then finish_reason `content_filter` (an answer the content filter stopped)
 *   parallel-caller with `tools` offered: one call per tool (the first twice when only one is offered), each with
 *                   its own id, streamed one call after another as OpenAI does; after a tool result: as tool-caller
 *   cached-<reads>-<w5m>-<w1h> like echo, with <reads> more prompt tokens read from OpenAI's prompt cache, reported
 *                   as OpenAI does: in `prompt_tokens` (which counts every input token) and in
 *                   `prompt_tokens_details: {cached_tokens, audio_tokens}` (OpenAI reports no cache writes: the
 *                   write counts in the name are not used)
 *   reasoner        like echo, with reasoning text (REASONING) in `message.reasoning` / `delta.reasoning` first
 *                   (vLLM >= 0.17 naming), its words in completion_tokens and no reasoning_tokens in usage, as vLLM
 *                   and llama.cpp report it
 */
export type { RecordedRequest };

export { REASONING, standInEmbedding };

/**
 * The members of a chat completions body (ChatCompletionCreateParams, openai-node 6.49). OpenAI answers any other
 * with 400 `invalid_request_error` "Unrecognized request argument supplied: <name>" (several: "arguments",
 * comma-separated), as clients have met it for `thinking`, `enable_thinking`, `top_k`, `num_keep`.
 */
const CHAT_MEMBERS = new Set([
  'messages',
  'model',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'moderation',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_options',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);

export class OpenAIUpstream extends StandInServer {
  /** Requests whose client (the gateway) went away before we finished. */
  readonly aborted: RecordedRequest[] = [];
  delayMs = 50;
  /** While true, the `toggle` model answers 500. */
  failing = false;
  /** The Retry-After its 429 answers carry (seconds). */
  retryAfter = '7';

  get url(): string {
    return `${this.origin}/v1`;
  }

  protected async handle(
    recorded: RecordedRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const body = recorded.body;
    res.on('close', () => {
      if (!res.writableFinished) this.aborted.push(recorded);
    });

    if (req.method === 'POST' && req.url === '/v1/embeddings') return this.embeddings(body, req, res);
    if (req.method === 'POST' && req.url === '/v1/responses') {
      if (req.headers.authorization !== 'Bearer upstream-secret-key')
        return this.error(
          res,
          401,
          'Incorrect API key provided.',
          'invalid_request_error',
          'invalid_api_key',
        );
      const status = /^status-(\d{3})$/.exec(String(body.model));
      if (status)
        return this.error(
          res,
          Number(status[1]),
          `Upstream says ${status[1]}`,
          statusType(Number(status[1])),
          statusCode(Number(status[1])),
        );
      return answerResponses(recorded, res, (prefix, length) => this.id(prefix, length));
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
      return this.error(res, 404, 'Not found', 'invalid_request_error', null);
    if (req.headers.authorization !== 'Bearer upstream-secret-key') {
      return this.error(
        res,
        401,
        'Incorrect API key provided: upst****-key.',
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    // vLLM takes (and ignores, with a warning) members OpenAI does not define; OpenAI refuses them, all named.
    const vllm = String(body.model).startsWith('vllm-');
    const unknown = vllm ? [] : Object.keys(body).filter((name) => !CHAT_MEMBERS.has(name));
    if (unknown.length)
      return this.error(
        res,
        400,
        `Unrecognized request argument${unknown.length > 1 ? 's' : ''} supplied: ${unknown.join(', ')}`,
        'invalid_request_error',
        null,
      );
    const model = String(body.model).replace(/^vllm-/, '');
    const status = /^status-(\d{3})$/.exec(model);
    if (status)
      return this.error(
        res,
        Number(status[1]),
        `Upstream says ${status[1]}`,
        statusType(Number(status[1])),
        statusCode(Number(status[1])),
      );
    if (model === 'leak-key') {
      return this.error(
        res,
        400,
        `Bad request from key ${req.headers.authorization?.slice(7)}`,
        'invalid_request_error',
        null,
      );
    }
    if (model === 'hang-headers') return; // never answers, not even headers
    if (model === 'toggle' && this.failing)
      return this.error(res, 500, 'Upstream says 500', 'server_error', null);
    const flaky = /^flaky-(\d+)$/.exec(model);
    if (flaky && this.random() * 100 < Number(flaky[1]))
      return this.error(res, 500, 'Upstream says 500', 'server_error', null);
    if (model === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('<html>502 Bad Gateway</html>');
      return;
    }
    if (model === 'error-body') {
      // OpenRouter's documented failure once a model has started: HTTP 200, the error in the body (streamed: the
      // first SSE data event), `code` the status it stands for.
      const failure = JSON.stringify({
        error: { code: 502, message: 'Provider returned error', metadata: { provider_name: 'standin' } },
      });
      if (body.stream)
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${failure}\n\n`);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(failure);
      return;
    }
    if (model === 'hang') {
      if (body.stream) res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders();
      return; // never answers
    }

    const messages = body.messages as Array<{ role: string; content: unknown }>;
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    const lastMessage = messages[messages.length - 1];
    const userText =
      typeof lastUser?.content === 'string' ? lastUser.content : JSON.stringify(lastUser?.content);
    if (
      model === 'parallel-caller' &&
      Array.isArray(body.tools) &&
      body.tools.length &&
      lastMessage.role !== 'tool'
    ) {
      const tools: Array<{ function: { name: string } }> =
        body.tools.length > 1 ? body.tools : [body.tools[0], body.tools[0]];
      return this.toolCalls(
        recorded,
        res,
        tools.map((tool, i) => ({
          id: this.id('call_'),
          name: tool.function.name,
          args: JSON.stringify({ query: userText, call: i + 1 }),
        })),
      );
    }
    if (
      model === 'tool-caller' &&
      Array.isArray(body.tools) &&
      body.tools.length &&
      lastMessage.role !== 'tool'
    ) {
      const parts = Array.isArray(lastUser?.content)
        ? (lastUser.content as Array<{ type: string; text?: string }>)
        : [];
      const asked = requestedToolCall(
        parts.length ? parts.map((part) => part.text ?? '').join('\n') : userText,
      );
      return this.toolCalls(recorded, res, [
        {
          id: 'call_abc123',
          name: asked?.name ?? body.tools[0].function.name,
          args: JSON.stringify(asked?.input ?? { query: userText }),
        },
      ]);
    }
    const text =
      (model === 'tool-caller' || model === 'parallel-caller') && lastMessage.role === 'tool'
        ? `tool said: ${String(lastMessage.content)}`
        : `echo: ${userText}`;
    const stops = typeof body.stop === 'string' ? [body.stop] : ((body.stop as string[] | null) ?? []);
    const made = generate(model === 'filtered' ? 'echo: ' : text, {
      maxTokens: (body.max_completion_tokens ?? body.max_tokens) as number | undefined,
      stops,
    });
    const emitted = model === 'refuser' ? [] : made.tokens;
    const refusal = model === 'refuser' ? "I'm sorry, I can't help with that." : null;
    const finishReason =
      model === 'filtered' ? 'content_filter' : made.ended === 'max_tokens' ? 'length' : 'stop';
    const usage: {
      prompt_tokens: number;
      completion_tokens: number;
      total_tokens: number;
      prompt_tokens_details?: { cached_tokens: number; audio_tokens: number };
    } = {
      // A message's words (of its text parts, when its content is parts).
      prompt_tokens: messages.reduce(
        (n, m) =>
          n +
          (Array.isArray(m.content)
            ? words((m.content as Array<{ text?: unknown }>).map((part) => String(part.text ?? '')).join(' '))
            : String(typeof m.content === 'string' ? m.content : '').split(/\s+/).length),
        0,
      ),
      // Reasoning is generated output: vLLM counts it in completion_tokens (reporting no reasoning_tokens).
      completion_tokens:
        (refusal ? refusal.split(' ').length : emitted.length) +
        (model === 'reasoner' ? words(REASONING) : 0),
      total_tokens: 0,
    };
    const cache = cacheCountsOf(model);
    if (cache) {
      usage.prompt_tokens += cache.reads;
      usage.prompt_tokens_details = { cached_tokens: cache.reads, audio_tokens: 0 };
    }
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    recorded.usage = usage;
    const id = this.id('chatcmpl-', 29);
    const created = Math.floor(Date.now() / 1000);

    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: `${model}-2024-08-06`,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: refusal ? null : emitted.join(''),
                refusal,
                ...(model === 'reasoner' ? { reasoning: REASONING } : {}),
              },
              logprobs: null,
              finish_reason: finishReason,
            },
          ],
          usage,
          system_fingerprint: 'fp_standin',
        }),
      );
      return;
    }

    const streamOptions = body.stream_options as
      { include_usage?: boolean; include_obfuscation?: boolean } | undefined;
    const includeUsage = streamOptions?.include_usage === true;
    // OpenAI pads every chunk with an `obfuscation` string of random length unless include_obfuscation is false.
    const padded = streamOptions?.include_obfuscation !== false;
    const base = {
      id,
      object: 'chat.completion.chunk',
      created,
      model: `${model}-2024-08-06`,
      system_fingerprint: 'fp_standin',
    };
    const send = (choices: unknown[], extra: Record<string, unknown> = {}, flushed?: () => void) =>
      res.write(
        `data: ${JSON.stringify({ ...base, choices, ...(includeUsage ? { usage: null } : {}), ...extra, ...(padded ? { obfuscation: this.obfuscation() } : {}) })}\n\n`,
        flushed,
      );
    const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    send([
      {
        index: 0,
        delta: { role: 'assistant', content: refusal ? null : '', ...(refusal ? { refusal: '' } : {}) },
        logprobs: null,
        finish_reason: null,
      },
    ]);
    for (const word of refusal?.split(/(?<= )/) ?? [])
      send([{ index: 0, delta: { refusal: word }, logprobs: null, finish_reason: null }]);
    if (model === 'reasoner')
      for (const word of REASONING.split(/(?<= )/))
        send([{ index: 0, delta: { reasoning: word }, logprobs: null, finish_reason: null }]);
    for (let i = 0; i < emitted.length; i++) {
      if (res.destroyed) return;
      if (model === 'slow') await wait(this.delayMs);
      const flushed = new Promise<void>((resolve) =>
        send(
          [{ index: 0, delta: { content: emitted[i] }, logprobs: null, finish_reason: null }],
          {},
          resolve,
        ),
      );
      if (i === 1 && model === 'midstream-error') {
        res.end(
          `data: ${JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: 'server_error' } })}\n\n`,
        );
        return;
      }
      if (i === 1 && model === 'cut') {
        await flushed; // what was written reached the socket (the write's callback): then the connection drops
        res.destroy();
        return;
      }
    }
    send([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }]);
    if (includeUsage) res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  /**
   * Function calls, whole or streamed (OpenAI's chat completions tool-call format: each call's first delta has its
   * index, id and name, then its argument fragments, one call after another).
   */
  private toolCalls(
    recorded: RecordedRequest,
    res: ServerResponse,
    calls: Array<{ id: string; name: string; args: string }>,
  ): void {
    const body = recorded.body;
    recorded.toolCallIds = calls.map((call) => call.id);
    const id = this.id('chatcmpl-', 29);
    const created = Math.floor(Date.now() / 1000);
    const usage = {
      prompt_tokens: 20,
      completion_tokens: 9 * calls.length,
      total_tokens: 20 + 9 * calls.length,
    };
    const whole = calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.args },
    }));
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: 'tool-caller-1',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: null, tool_calls: whole, refusal: null },
              logprobs: null,
              finish_reason: 'tool_calls',
            },
          ],
          usage,
        }),
      );
      return;
    }
    const includeUsage = body.stream_options?.include_usage === true;
    const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'tool-caller-1', choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`,
      );
    const delta = (d: Record<string, unknown>) =>
      send([{ index: 0, delta: d, logprobs: null, finish_reason: null }]);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    for (const [index, call] of calls.entries()) {
      delta({
        ...(index === 0 ? { role: 'assistant', content: null } : {}),
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      });
      delta({ tool_calls: [{ index, function: { arguments: call.args.slice(0, 4) } }] });
      delta({ tool_calls: [{ index, function: { arguments: call.args.slice(4) } }] });
    }
    send([{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }]);
    if (includeUsage)
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'tool-caller-1', choices: [], usage })}\n\n`,
      );
    res.end('data: [DONE]\n\n');
  }

  /**
   * OpenAI's embeddings (CreateEmbeddingResponse): one vector per input, `dimensions` long (8 by default), derived
   * from the input's text so equal inputs give equal vectors; `encoding_format: base64` is the vector's float32
   * bytes in base64 (what the SDK asks for by default); usage counts one token per whitespace-separated word.
   * `status-<code>` models fail as for chat.
   */
  private embeddings(body: Record<string, any>, req: IncomingMessage, res: ServerResponse): void {
    if (req.headers.authorization !== 'Bearer upstream-secret-key')
      return this.error(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    const status = /^status-(\d{3})$/.exec(String(body.model));
    if (status)
      return this.error(
        res,
        Number(status[1]),
        `Upstream says ${status[1]}`,
        statusType(Number(status[1])),
        statusCode(Number(status[1])),
      );
    const inputs: unknown[] =
      typeof body.input === 'string' || (Array.isArray(body.input) && typeof body.input[0] === 'number')
        ? [body.input]
        : body.input;
    // As OpenAI: text-embedding-3 models make at most 3072 dimensions (a fuzzed 2^40 must not make this stand-in allocate it).
    if (
      body.dimensions !== undefined &&
      !(Number.isInteger(body.dimensions) && body.dimensions >= 1 && body.dimensions <= 3072)
    ) {
      return this.error(
        res,
        400,
        `Invalid 'dimensions': must be an integer from 1 to 3072.`,
        'invalid_request_error',
        null,
      );
    }
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 8;
    let tokens = 0;
    const data = inputs.map((input, index) => {
      const text = typeof input === 'string' ? input : JSON.stringify(input);
      tokens +=
        typeof input === 'string' ? input.split(/\s+/).filter(Boolean).length : (input as unknown[]).length;
      const vector = standInEmbedding(text, dimensions);
      const embedding =
        body.encoding_format === 'base64'
          ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
          : vector;
      return { object: 'embedding', index, embedding };
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        object: 'list',
        data,
        model: `${body.model}-v1`,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      }),
    );
  }

  /** OpenAI's `obfuscation` padding: random characters of random length, different in every chunk. */
  private obfuscation(): string {
    return this.id('', Math.floor(this.random() * 10));
  }

  private error(
    res: ServerResponse,
    status: number,
    message: string,
    type: string,
    code: string | null,
  ): void {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (status === 429) headers['retry-after'] = this.retryAfter;
    res.writeHead(status, headers);
    res.end(JSON.stringify({ error: { message, type, param: null, code } }));
  }
}

function statusType(status: number): string {
  if (status === 429) return 'requests';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

function statusCode(status: number): string | null {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 400) return 'context_length_exceeded';
  return null;
}
