// Stand-in upstreams for benchmarks, written to the vendors' documented wire formats
// (../shared/reference/wire-formats.md). Listens on 127.0.0.1 only; prints {"port": N} when ready.
//   POST /v1/chat/completions  OpenAI: chat.completion, or chat.completion.chunk SSE with a usage chunk
//                              (when stream_options.include_usage) and `data: [DONE]`
//   POST /v1/messages          Anthropic Messages: a Message, or message_start, content_block_start,
//                              content_block_delta..., content_block_stop, message_delta, message_stop
// Every answer comes after LATENCY_MS and streams CHUNKS chunks GAP_MS apart. A model name ending in
// `-<N>` (bench-200) streams N chunks instead, so one upstream serves every chunk-count scenario.
import { createServer } from 'node:http';

const latency = Number(process.env.LATENCY_MS ?? 0);
const defaultChunks = Number(process.env.CHUNKS ?? 20);
const gap = Number(process.env.GAP_MS ?? 0);
const wait = (ms) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());
const chunksFor = (model) => Number(/-(\d+)$/.exec(String(model))?.[1] ?? defaultChunks);
// Numbered words: LiteLLM cuts a stream that repeats the same chunk 100 times (its loop guard).
const word = (i) => `w${i} `;
const answer = (chunks) => Array.from({ length: chunks }, (_, i) => word(i)).join('');

function fail(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function openai(body, res) {
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
    return fail(res, 400, {
      error: {
        message: 'model and messages are required',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
  }
  const chunks = chunksFor(body.model);
  const id = 'chatcmpl-bench';
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 10, completion_tokens: chunks, total_tokens: 10 + chunks };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model: body.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: answer(chunks) },
            finish_reason: 'stop',
            logprobs: null,
          },
        ],
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (choices, extra = {}) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices, ...extra })}\n\n`,
    );
  send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (let i = 0; i < chunks; i++) {
    await wait(gap);
    send([{ index: 0, delta: { content: word(i) }, finish_reason: null }]);
  }
  send([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  if (body.stream_options?.include_usage) send([], { usage });
  res.end('data: [DONE]\n\n');
}

async function anthropic(req, body, res) {
  if (!req.headers['x-api-key'] || !req.headers['anthropic-version']) {
    return fail(res, 401, {
      type: 'error',
      error: { type: 'authentication_error', message: 'x-api-key and anthropic-version are required' },
    });
  }
  if (typeof body.max_tokens !== 'number' || !Array.isArray(body.messages)) {
    return fail(res, 400, {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens and messages are required' },
    });
  }
  const chunks = chunksFor(body.model);
  const usage = { input_tokens: 10, output_tokens: chunks };
  const message = {
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...message,
        content: [{ type: 'text', text: answer(chunks) }],
        stop_reason: 'end_turn',
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event, data) =>
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send('message_start', { message });
  send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  for (let i = 0; i < chunks; i++) {
    await wait(gap);
    send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: word(i) } });
  }
  send('content_block_stop', { index: 0 });
  send('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: chunks },
  });
  send('message_stop', {});
  res.end();
}

const server = createServer(async (req, res) => {
  // Bytes gathered and decoded once: `raw += chunk` decodes each read and flattens the result again, which
  // for half-megabyte prompts was the stand-in's main cost on the cores it shares with the gateway.
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const raw = Buffer.concat(chunks).toString('utf8');
  let body;
  try {
    body = JSON.parse(raw || '{}');
  } catch {
    return fail(res, 400, {
      error: { message: 'invalid JSON', type: 'invalid_request_error', param: null, code: null },
    });
  }
  // vLLM's liveness route, which a router (vllm-router) polls before it sends a worker traffic.
  if (req.method === 'GET' && req.url === '/health') return res.writeHead(200).end();
  await wait(latency);
  if (req.method === 'POST' && req.url === '/v1/chat/completions') return openai(body, res);
  if (req.method === 'POST' && req.url === '/v1/messages') return anthropic(req, body, res);
  fail(res, 404, { error: { message: 'not found', type: 'invalid_request_error', param: null, code: null } });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
