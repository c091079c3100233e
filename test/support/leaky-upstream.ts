import type { IncomingMessage, ServerResponse } from 'node:http';
import { StandInServer, type RecordedRequest } from './standin-server';

/** The forms in which vendors have been seen to echo a key (docs/api.md, Errors): each is planted in every field. */
export const KEY_FORMS = ['whole', 'urlencoded', 'bare', 'truncated', 'masked'] as const;
export type KeyForm = (typeof KEY_FORMS)[number];

/** Vendor prefixes, which a "bare" echo leaves out. */
const PREFIXES = ['sk-ant-api03-', 'sk-proj-', 'AIza'];

export function keyIn(form: KeyForm, key: string): string {
  const prefix = PREFIXES.find((p) => key.startsWith(p)) ?? '';
  switch (form) {
    case 'whole':
      return key;
    case 'urlencoded':
      return encodeURIComponent(key);
    case 'bare':
      return key.slice(prefix.length);
    case 'truncated':
      return `${key.slice(0, 20)}...`;
    case 'masked':
      return `${key.slice(0, 12)}${'*'.repeat(16)}${key.slice(-10)}`;
  }
}

/**
 * A vendor that echoes the key it was called with in every field of its errors, in each vendor's own error
 * shape, before a stream starts and inside one. One server for every family, told apart by the path prefix:
 *   /openai/v1/chat/completions, /openai/v1/embeddings, /openai/v1/responses   OpenAI (`Authorization: Bearer`)
 *   /anthropic/v1/messages                                                      Anthropic (`x-api-key`)
 *   /gemini/v1beta/models/<m>:generateContent | :streamGenerateContent | :batchEmbedContents   Gemini (`x-goog-api-key`)
 * The model name says what to do: `leak.<form>.<status>` answers that HTTP status; `leak.<form>.stream` streams a
 * little and then sends the vendor's in-band error event; `leak.<form>.failed` (Responses only) ends the stream
 * with `response.failed`. The key is echoed as `keyIn(form, key)`.
 */
export class LeakyUpstream extends StandInServer {
  url(family: 'openai' | 'anthropic' | 'gemini'): string {
    return `${this.origin}/${family}/${family === 'gemini' ? 'v1beta' : 'v1'}`;
  }

  protected handle(
    { path, headers, body }: RecordedRequest,
    _req: IncomingMessage,
    res: ServerResponse,
  ): void {
    const gemini = /^\/gemini\/v1beta\/models\/([^/:]+):(\w+)/.exec(path);
    const model = gemini ? gemini[1] : String(body.model);
    const [, form, what] = /^leak\.(\w+)\.(\w+)$/.exec(model) ?? [];
    if (!form) return void res.writeHead(404).end();
    const key =
      String(headers.authorization ?? '').replace(/^Bearer /, '') ||
      String(headers['x-api-key'] ?? headers['x-goog-api-key'] ?? '');
    const k = keyIn(form as KeyForm, key);
    const status = Number(what);

    if (path.startsWith('/openai/')) {
      const error = { message: `Incorrect API key provided: ${k}.`, type: k, param: k, code: k };
      if (status) return json(res, status, { error }, status === 429 ? { 'retry-after': '0' } : {});
      if (path.endsWith('/responses')) {
        // Every member OpenAI's Response schema requires, so the native passthrough's events conform up to the error.
        const response = {
          id: 'resp_leak',
          object: 'response',
          created_at: 0,
          status: 'in_progress',
          model,
          output: [],
          error: null,
          incomplete_details: null,
          instructions: null,
          tools: [],
          parallel_tool_calls: true,
          metadata: {},
          tool_choice: 'auto',
          temperature: 1,
          top_p: 1,
        };
        const failed = {
          ...response,
          status: 'failed',
          error: { code: k, message: `Key ${k} was refused.` },
        };
        // Not streamed, the code must stay in the spec's enum (the gateway passes a native Response on as it came).
        if (!body.stream)
          return json(res, 200, {
            ...failed,
            error: { code: 'server_error', message: `Key ${k} was refused.` },
          });
        sse(res, [
          ['response.created', { type: 'response.created', sequence_number: 0, response }],
          what === 'failed'
            ? ['response.failed', { type: 'response.failed', sequence_number: 1, response: failed }]
            : [
                'error',
                { type: 'error', sequence_number: 1, code: k, message: `Key ${k} was refused.`, param: k },
              ],
        ]);
        return;
      }
      const chunk = (delta: object) => ({
        id: 'chatcmpl-leak',
        object: 'chat.completion.chunk',
        created: 0,
        model,
        choices: [{ index: 0, delta, finish_reason: null }],
      });
      sse(res, [
        [undefined, chunk({ role: 'assistant', content: '' })],
        [undefined, chunk({ content: 'partial ' })],
        [undefined, { error }],
      ]);
      return;
    }
    if (path.startsWith('/anthropic/')) {
      const error = { type: k, message: `invalid x-api-key ${k}` };
      if (status) return json(res, status, { type: 'error', error, request_id: 'req_leak' });
      // Every member the Anthropic SDK's types declare, so the native passthrough's events conform up to the error.
      const usage = {
        input_tokens: 1,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        inference_geo: 'us',
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: 'standard',
        speed: 'standard',
      };
      const message = {
        id: 'msg_leak',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        container: null,
        diagnostics: null,
        usage,
      };
      sse(res, [
        ['message_start', { type: 'message_start', message }],
        [
          'content_block_start',
          {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'text', text: '', citations: null },
          },
        ],
        [
          'content_block_delta',
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'partial ' } },
        ],
        ['error', { type: 'error', error }],
      ]);
      return;
    }
    const error = {
      code: status || 400,
      message: `API key not valid: ${k}`,
      status: k,
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: k }],
    };
    if (status) return json(res, status, { error });
    sse(res, [
      [
        undefined,
        {
          candidates: [{ content: { role: 'model', parts: [{ text: 'partial ' }] }, index: 0 }],
          modelVersion: model,
        },
      ],
      [undefined, { error }],
    ]);
  }
}

function json(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function sse(res: ServerResponse, events: Array<[string | undefined, object]>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [event, data] of events)
    res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  res.end();
}
