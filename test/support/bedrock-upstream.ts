import type { IncomingMessage, ServerResponse } from 'node:http';
import { awkwardSlices, eventFrame, exceptionFrame } from './aws-event-stream';
import { verifySigV4, type AwsKey } from './aws-sigv4-check';
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
 * A stand-in AWS Bedrock Runtime, written from AWS's API reference (InvokeModel, InvokeModelWithResponseStream,
 * Converse, ConverseStream, CountTokens) and the Anthropic-on-Bedrock request page:
 *   - auth: SigV4 for service `bedrock` in `region`, recomputed by aws-sigv4-check.ts (this test's own code), with
 *     Bedrock's 403 bodies on a mismatch; or `Authorization: Bearer <Bedrock API key>`;
 *   - `POST /model/<url-escaped model id>/<operation>`; errors are `{"message": ...}` with `x-amzn-ErrorType`;
 *   - InvokeModel for `anthropic.` models: Anthropic's Messages body with `anthropic_version: "bedrock-2023-05-31"`,
 *     no `model` or `stream` ("extraneous key [x] is not permitted", as Bedrock's schema answers any member it does
 *     not define), betas only from Bedrock's list in `anthropic_beta` (any other: "invalid beta flag"); streams are
 *     `chunk` events of `{"bytes": <base64 Anthropic event>, "p": <padding>}`, message_stop carrying
 *     `amazon-bedrock-invocationMetrics`;
 *   - Converse for any model: messages/system/inferenceConfig/toolConfig, answer with usage including cache reads
 *     and writes; ConverseStream events messageStart, contentBlockStart/Delta/Stop, messageStop, metadata;
 *   - InvokeModel for embedding models: Titan Text Embeddings v2 (`inputText` -> `embedding`, `inputTextTokenCount`)
 *     and Cohere Embed (`texts`, `input_type` -> `embeddings`);
 *   - streams are AWS event-stream frames (aws-event-stream.ts, this test's own encoder) written in slices cut inside
 *     preludes, headers and CRCs.
 * Behaviour by model id: `...throttled...` answers 429 ThrottlingException; `...midstream...` streams one delta and
 * then an exception frame; `...cached-<reads>-<w5m>-<w1h>...` reports the prompt cache as Bedrock does: Claude's
 * usage as Anthropic's (`cache_read_input_tokens`, `cache_creation_input_tokens` and the 5m/1h `cache_creation`
 * split; the invocation metrics' `cacheReadInputTokenCount`/`cacheWriteInputTokenCount`), Converse's as
 * `cacheReadInputTokens` <reads> and `cacheWriteInputTokens` <w5m + w1h> beside `inputTokens` (uncached). Converse
 * takes `{cachePoint: {type: "default"}}` blocks in `system`, messages and `toolConfig.tools` (any other
 * cachePoint type is a 400). A replayed thinking block whose signature this stand-in did not make is a 400.
 */

/**
 * The `anthropic_beta` flags this stand-in's Bedrock knows (any other: "invalid beta flag"), written from AWS's
 * "Anthropic Claude Messages API" request page (its `anthropic_beta` list: computer-use-2025-01-24,
 * token-efficient-tools-2025-02-19, interleaved-thinking-2025-05-14, output-128k-2025-02-19,
 * dev-full-thinking-2025-05-14, context-1m-2025-08-07, context-management-2025-06-27, effort-2025-11-24,
 * tool-search-tool-2025-10-19, tool-examples-2025-10-29) and AWS's computer-use page for Claude 3.5 Sonnet v2
 * (computer-use-2024-10-22); not from the gateway's list, which a test checks against this one. Anthropic's server
 * tools (web search) are not offered on Bedrock, so their betas are not here.
 */
const KNOWN_BETAS = new Set([
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'dev-full-thinking-2025-05-14',
  'effort-2025-11-24',
  'interleaved-thinking-2025-05-14',
  'output-128k-2025-02-19',
  'token-efficient-tools-2025-02-19',
  'tool-examples-2025-10-29',
  'tool-search-tool-2025-10-19',
]);

/** The members of Bedrock's Anthropic Messages body. */
const INVOKE_MEMBERS = new Set([
  'anthropic_version',
  'anthropic_beta',
  'max_tokens',
  'messages',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'tools',
  'tool_choice',
  'thinking',
  'context_management',
  // docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-adaptive-thinking.html: effort only.
  'output_config',
]);

const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export interface BedrockUpstreamOptions {
  region?: string;
  keys?: AwsKey[];
  /** A Bedrock API key accepted as `Authorization: Bearer`. */
  apiKey?: string;
}

export class BedrockUpstream extends StandInServer {
  readonly region: string;
  readonly keys: AwsKey[];
  readonly apiKey?: string;
  /** Every request's verdict on its auth (for tests that check which credentials signed). */
  readonly signedBy: string[] = [];

  constructor(options: BedrockUpstreamOptions = {}, seed?: number) {
    super(seed);
    this.region = options.region ?? 'us-east-1';
    this.keys = options.keys ?? [];
    this.apiKey = options.apiKey;
  }

  get url(): string {
    return this.origin;
  }

  protected override modelOf(recorded: RecordedRequest): string {
    return decodeURIComponent(/^\/model\/([^/]+)\//.exec(recorded.path)?.[1] ?? '');
  }

  protected async handle(
    recorded: RecordedRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const denied = this.authProblem(recorded, req);
    if (denied) return awsError(res, denied.status, denied.errorType, denied.message);
    const match =
      /^\/model\/([^/?]+)\/(invoke|invoke-with-response-stream|converse|converse-stream|count-tokens)$/.exec(
        recorded.path,
      );
    if (!match) return awsError(res, 404, 'UnknownOperationException', 'Unknown operation');
    const model = decodeURIComponent(match[1]);
    const operation = match[2];
    if (model.includes('throttled'))
      return awsError(res, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
    if (operation === 'converse' || operation === 'converse-stream')
      return this.converse(recorded, model, operation === 'converse-stream', res);
    if (operation === 'count-tokens') return this.countTokens(recorded.body, model, res);
    if (/titan-embed|cohere\.embed/.test(model)) return this.embed(recorded.body, model, res);
    if (!/(^|[./:])anthropic\./.test(model))
      return awsError(res, 400, 'ValidationException', `The provided model identifier is invalid.`);
    return this.invoke(recorded, model, operation === 'invoke-with-response-stream', res);
  }

  private authProblem(recorded: RecordedRequest, req: IncomingMessage) {
    const authorization = req.headers.authorization ?? '';
    if (this.apiKey && authorization.startsWith('Bearer ')) {
      if (authorization === `Bearer ${this.apiKey}`) {
        this.signedBy.push('api-key');
        return undefined;
      }
      return {
        status: 403,
        errorType: 'AccessDeniedException',
        message: 'Authentication failed: Please make sure your API Key is valid.',
      };
    }
    const verdict = verifySigV4({
      method: req.method ?? 'POST',
      url: recorded.path,
      headers: req.headers,
      body: Buffer.from(recorded.text, 'utf8'),
      keys: this.keys,
      region: this.region,
      service: 'bedrock',
    });
    if (!verdict.ok) return verdict;
    this.signedBy.push(verdict.accessKeyId);
    return undefined;
  }

  // InvokeModel for Claude.

  private invokeProblem(body: Record<string, any>): string | undefined {
    const extra = Object.keys(body).filter((name) => !INVOKE_MEMBERS.has(name));
    const problems = extra.map((name) => `#: extraneous key [${name}] is not permitted`);
    const config = body.output_config;
    if (config !== undefined) {
      const keys = typeof config === 'object' && config !== null ? Object.keys(config) : ['(not an object)'];
      for (const key of keys.filter((name) => name !== 'effort'))
        problems.push(`#/output_config: extraneous key [${key}] is not permitted`);
      if (!['low', 'medium', 'high', 'xhigh', 'max'].includes(config?.effort))
        problems.push('#/output_config/effort: is not a valid enum value');
    }
    if (body.anthropic_version !== 'bedrock-2023-05-31')
      problems.unshift('#: required key [anthropic_version] not found');
    if (!Array.isArray(body.messages)) problems.unshift('#: required key [messages] not found');
    if (typeof body.max_tokens !== 'number') problems.unshift('#: required key [max_tokens] not found');
    return problems.length
      ? `Malformed input request: ${problems.join('')}, please reformat your input and try again.`
      : undefined;
  }

  private async invoke(
    recorded: RecordedRequest,
    model: string,
    stream: boolean,
    res: ServerResponse,
  ): Promise<void> {
    const body = recorded.body;
    const problem = this.invokeProblem(body);
    if (problem) return awsError(res, 400, 'ValidationException', problem);
    for (const beta of body.anthropic_beta ?? [])
      if (!KNOWN_BETAS.has(beta)) return awsError(res, 400, 'ValidationException', 'invalid beta flag');
    // AWS's adaptive-thinking page: these models take only `adaptive` (with output_config.effort); a manual budget
    // (`enabled`) is a 400.
    if (/claude-(sonnet-5|opus-5|opus-4-7|mythos|fable)/.test(model) && body.thinking?.type === 'enabled')
      return awsError(
        res,
        400,
        'ValidationException',
        'thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort to control thinking behavior.',
      );
    for (const message of body.messages)
      for (const block of Array.isArray(message.content) ? message.content : [])
        if (block.type === 'thinking' && !String(block.signature).startsWith('sig-'))
          return awsError(
            res,
            400,
            'ValidationException',
            'messages: Invalid `signature` in `thinking` block',
          );

    const { blocks, stopReason, usage } = this.claudeAnswer(body, model);
    recorded.toolCallIds = blocks.filter((b) => b.type === 'tool_use').map((b) => String(b.id));
    recorded.usage = usage;
    const message = {
      id: this.id('msg_bdrk_01', 22),
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    };
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': this.id('', 32) });
      res.end(JSON.stringify(message));
      return;
    }
    const events: object[] = [
      {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      },
    ];
    let failAfter = -1;
    for (const [index, block] of blocks.entries()) {
      if (block.type === 'thinking') {
        events.push({
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        });
        events.push({
          type: 'content_block_delta',
          index,
          delta: { type: 'thinking_delta', thinking: block.thinking },
        });
        events.push({
          type: 'content_block_delta',
          index,
          delta: { type: 'signature_delta', signature: block.signature },
        });
      } else if (block.type === 'tool_use') {
        events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
        const json = JSON.stringify(block.input);
        events.push({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(0, 4) },
        });
        events.push({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(4) },
        });
      } else {
        events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        for (const word of String(block.text).split(/(?<= )/)) {
          events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: word } });
          if (model.includes('midstream') && failAfter < 0) failAfter = events.length;
        }
      }
      events.push({ type: 'content_block_stop', index });
    }
    events.push({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    events.push({
      type: 'message_stop',
      'amazon-bedrock-invocationMetrics': {
        inputTokenCount: usage.input_tokens,
        outputTokenCount: usage.output_tokens,
        invocationLatency: 420,
        firstByteLatency: 120,
        cacheReadInputTokenCount: usage.cache_read_input_tokens,
        cacheWriteInputTokenCount: usage.cache_creation_input_tokens,
      },
    });
    const frames = events.map((event) =>
      eventFrame('chunk', {
        bytes: Buffer.from(JSON.stringify(event)).toString('base64'),
        p: this.padding(),
      }),
    );
    if (failAfter >= 0) {
      frames.length = failAfter;
      frames.push(exceptionFrame('modelStreamErrorException', 'The model stream was interrupted.'));
    }
    await this.writeFrames(res, frames);
  }

  /** What the stand-in Claude answers: as anthropic-upstream.ts's claude-echo. */
  private claudeAnswer(body: Record<string, any>, model: string) {
    const last = body.messages[body.messages.length - 1];
    const lastBlocks: Array<Record<string, any>> =
      typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
    const toolResult = lastBlocks.find((b) => b.type === 'tool_result');
    const userText = lastBlocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join(' ');
    const blocks: Array<Record<string, any>> = [];
    if (body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive')
      blocks.push({
        type: 'thinking',
        thinking: `Let me think about ${userText || 'the tool result'}.`,
        signature: `sig-${Buffer.from(userText).toString('base64')}`,
      });
    let stopReason = 'end_turn';
    const offered = Array.isArray(body.tools) && body.tools.length && body.tool_choice?.type !== 'none';
    const resultText = (content: unknown) =>
      typeof content === 'string' ? content : JSON.stringify(content);
    if (toolResult) blocks.push({ type: 'text', text: `tool said: ${resultText(toolResult.content)}` });
    else if (offered) {
      const asked = requestedToolCall(userText);
      blocks.push({
        type: 'tool_use',
        id: this.id('toolu_bdrk_01', 20),
        name: asked?.name ?? body.tools[0].name,
        input: asked?.input ?? { query: userText },
      });
      stopReason = 'tool_use';
    } else {
      const made = generate(`echo: ${userText}`, { maxTokens: body.max_tokens, stops: body.stop_sequences });
      if (made.ended === 'max_tokens') stopReason = 'max_tokens';
      blocks.push({ type: 'text', text: made.text });
    }
    const input = body.messages.reduce(
      (n: number, m: { content: unknown }) => n + words(JSON.stringify(m.content)),
      0,
    );
    const output = blocks.reduce(
      (n, b) => n + words(String(b.text ?? b.thinking ?? JSON.stringify(b.input ?? ''))),
      0,
    );
    const cached = cacheCountsOf(model);
    return {
      blocks,
      stopReason,
      usage: cached
        ? {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: cached.reads,
            cache_creation_input_tokens: cached.writes5m + cached.writes1h,
            cache_creation: {
              ephemeral_5m_input_tokens: cached.writes5m,
              ephemeral_1h_input_tokens: cached.writes1h,
            },
          }
        : {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: 4,
            cache_creation_input_tokens: 2,
          },
    };
  }

  private countTokens(body: Record<string, any>, model: string, res: ServerResponse): void {
    const inner = body?.input?.invokeModel?.body;
    if (typeof inner !== 'string')
      return awsError(res, 400, 'ValidationException', 'input: a valid input is required');
    if (!/(^|[./:])anthropic\./.test(model))
      return awsError(res, 400, 'ValidationException', "The provided model doesn't support counting tokens.");
    const parsed = JSON.parse(inner) as Record<string, any>;
    const problem = this.invokeProblem(parsed);
    if (problem) return awsError(res, 400, 'ValidationException', problem);
    const counted = parsed.messages.reduce(
      (n: number, m: { content: unknown }) => n + words(JSON.stringify(m.content)),
      0,
    );
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ inputTokens: counted }));
  }

  // Converse.

  private converseProblem(body: Record<string, any>): string | undefined {
    // Converse is a JSON API whose unknown members are ignored, not refused (unlike InvokeModel's Claude schema).
    if (!Array.isArray(body.messages) || body.messages.length === 0)
      return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
    if (body.messages[0].role !== 'user')
      return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
    for (const [i, message] of body.messages.entries()) {
      if (i > 0 && body.messages[i - 1].role === message.role)
        return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
      if (!Array.isArray(message.content) || message.content.length === 0)
        return `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`;
      for (const block of message.content) {
        if (Object.keys(block).length !== 1)
          return `messages.${i}.content: a ContentBlock takes exactly one member`;
        if ('cachePoint' in block && block.cachePoint?.type !== 'default')
          return `messages.${i}.content: cachePoint.type must be 'default'`;
        if (('toolUse' in block || 'toolResult' in block) && !body.toolConfig)
          return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
      }
    }
    return undefined;
  }

  private async converse(
    recorded: RecordedRequest,
    model: string,
    stream: boolean,
    res: ServerResponse,
  ): Promise<void> {
    const body = recorded.body;
    const problem = this.converseProblem(body);
    if (problem) return awsError(res, 400, 'ValidationException', problem);
    const last = body.messages[body.messages.length - 1];
    const toolResult = last.content.find((b: Record<string, any>) => b.toolResult)?.toolResult;
    const userText = last.content
      .filter((b: Record<string, any>) => typeof b.text === 'string')
      .map((b: { text: string }) => b.text)
      .join(' ');
    const tools = body.toolConfig?.tools ?? [];
    const content: Array<Record<string, any>> = [];
    let stopReason = 'end_turn';
    if (toolResult)
      content.push({
        text: `tool said: ${toolResult.content.map((c: { text?: string }) => c.text ?? '').join('')}`,
      });
    else if (tools.length) {
      const asked = requestedToolCall(userText);
      content.push({
        toolUse: {
          toolUseId: this.id('tooluse_', 22),
          name: asked?.name ?? tools[0].toolSpec.name,
          input: asked?.input ?? { query: userText },
        },
      });
      stopReason = 'tool_use';
    } else {
      const made = generate(`echo: ${userText}`, {
        maxTokens: body.inferenceConfig?.maxTokens,
        stops: body.inferenceConfig?.stopSequences,
      });
      if (made.ended === 'max_tokens') stopReason = 'max_tokens';
      content.push({ text: made.text });
    }
    const inputTokens = body.messages.reduce(
      (n: number, m: { content: unknown }) => n + words(JSON.stringify(m.content)),
      0,
    );
    const outputTokens = content.reduce((n, b) => n + words(b.text ?? JSON.stringify(b.toolUse.input)), 0);
    const cached = cacheCountsOf(model);
    const reads = cached ? cached.reads : 3;
    const writes = cached ? cached.writes5m + cached.writes1h : 5;
    const usage = {
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens + reads + writes,
      cacheReadInputTokens: reads,
      cacheWriteInputTokens: writes,
    };
    recorded.usage = usage;
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          output: { message: { role: 'assistant', content } },
          stopReason,
          usage,
          metrics: { latencyMs: 321 },
        }),
      );
      return;
    }
    const frames: Buffer[] = [eventFrame('messageStart', { role: 'assistant', p: this.padding() })];
    for (const [contentBlockIndex, block] of content.entries()) {
      if (block.toolUse) {
        const { toolUseId, name, input } = block.toolUse;
        frames.push(
          eventFrame('contentBlockStart', {
            contentBlockIndex,
            start: { toolUse: { toolUseId, name } },
            p: this.padding(),
          }),
        );
        const json = JSON.stringify(input);
        for (const part of [json.slice(0, 3), json.slice(3)])
          frames.push(
            eventFrame('contentBlockDelta', {
              contentBlockIndex,
              delta: { toolUse: { input: part } },
              p: this.padding(),
            }),
          );
      } else {
        for (const word of String(block.text).split(/(?<= )/)) {
          frames.push(
            eventFrame('contentBlockDelta', { contentBlockIndex, delta: { text: word }, p: this.padding() }),
          );
          if (model.includes('midstream')) {
            frames.push(
              exceptionFrame('throttlingException', 'Too many tokens, please wait before trying again.'),
            );
            return this.writeFrames(res, frames);
          }
        }
      }
      frames.push(eventFrame('contentBlockStop', { contentBlockIndex, p: this.padding() }));
    }
    frames.push(eventFrame('messageStop', { stopReason, p: this.padding() }));
    frames.push(eventFrame('metadata', { usage, metrics: { latencyMs: 321 }, p: this.padding() }));
    await this.writeFrames(res, frames);
  }

  // Embeddings.

  private embed(body: Record<string, any>, model: string, res: ServerResponse): void {
    const vector = (text: string) => Array.from({ length: 8 }, (_, i) => ((text.length + i) % 7) / 7);
    if (model.includes('cohere.embed')) {
      const extra = Object.keys(body).find(
        (k) => !['texts', 'input_type', 'truncate', 'embedding_types'].includes(k),
      );
      if (extra)
        return awsError(
          res,
          400,
          'ValidationException',
          `Malformed input request: #: extraneous key [${extra}] is not permitted, please reformat your input and try again.`,
        );
      if (!Array.isArray(body.texts) || typeof body.input_type !== 'string')
        return awsError(
          res,
          400,
          'ValidationException',
          'Malformed input request: #: required key [input_type] not found, please reformat your input and try again.',
        );
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          embeddings: body.texts.map(vector),
          id: this.id('', 36),
          response_type: 'embeddings_floats',
          texts: body.texts,
        }),
      );
      return;
    }
    const extra = Object.keys(body).find(
      (k) => !['inputText', 'dimensions', 'normalize', 'embeddingTypes'].includes(k),
    );
    if (extra)
      return awsError(
        res,
        400,
        'ValidationException',
        `Malformed input request: #: extraneous key [${extra}] is not permitted, please reformat your input and try again.`,
      );
    if (typeof body.inputText !== 'string')
      return awsError(
        res,
        400,
        'ValidationException',
        'Malformed input request: #: required key [inputText] not found, please reformat your input and try again.',
      );
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        embedding: vector(body.inputText),
        embeddingsByType: { float: vector(body.inputText) },
        inputTextTokenCount: words(body.inputText),
      }),
    );
  }

  private padding(): string {
    return PADDING.slice(0, 1 + Math.floor(this.random() * PADDING.length));
  }

  /** The frames in slices cut at awkward places, each written after a pause so it arrives as its own read. */
  private async writeFrames(res: ServerResponse, frames: Buffer[]): Promise<void> {
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-bedrock-content-type': 'application/json',
    });
    for (const slice of awkwardSlices(frames)) {
      res.write(slice);
      await wait(1);
    }
    res.end();
  }
}

function awsError(res: ServerResponse, status: number, errorType: string, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'x-amzn-requestid': '7f1c2a3e-0000-4000-8000-000000000000',
  });
  res.end(JSON.stringify({ message }));
}
