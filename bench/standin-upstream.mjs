// An OpenAI-compatible stand-in for benchmarks: answers /v1/chat/completions correctly (chat.completion,
// or chat.completion.chunk SSE with a usage chunk and [DONE]) after LATENCY_MS, streaming CHUNKS chunks
// GAP_MS apart. Listens on 127.0.0.1 only; prints {"port": N} when ready.
import { createServer } from 'node:http';

const latency = Number(process.env.LATENCY_MS ?? 0);
const chunks = Number(process.env.CHUNKS ?? 20);
const gap = Number(process.env.GAP_MS ?? 0);
const wait = (ms) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

const server = createServer(async (req, res) => {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const body = JSON.parse(raw || '{}');
  await wait(latency);
  const id = 'chatcmpl-bench';
  const created = Math.floor(Date.now() / 1000);
  const usage = { prompt_tokens: 10, completion_tokens: chunks, total_tokens: 10 + chunks };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(chunks) }, finish_reason: 'stop', logprobs: null }], usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (choices, extra = {}) => res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices, ...extra })}\n\n`);
  send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (let i = 0; i < chunks; i++) {
    await wait(gap);
    send([{ index: 0, delta: { content: 'word ' }, finish_reason: null }]);
  }
  send([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  if (body.stream_options?.include_usage) send([], { usage });
  res.end('data: [DONE]\n\n');
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
