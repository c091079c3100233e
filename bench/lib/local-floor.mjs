// The floor for serving the local model over HTTP with the worker in its own process: a bare node:http server that
// hands each request to the gateway's worker (dist/providers/local/local-worker.js, pinned the same way) and streams
// its tokens back as OpenAI SSE chunks. No auth, validation, limits, accounting, metrics, Express or Nest: what is
// left is the two HTTP hops and the two IPC hops any isolated HTTP gateway pays. Prints {"url"} when ready.
// Argv: a JSON init message for the worker.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';

const init = JSON.parse(process.argv[2]);
const worker = fork(join(import.meta.dirname, '../../dist/providers/local/local-worker.js'), [], {
  stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  serialization: 'advanced',
});
const pending = new Map();
let nextId = 1;
worker.on('message', (message) => {
  if (message.type === 'ready') return void listen();
  const res = pending.get(message.id);
  if (!res) return;
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: `floor-${message.id}`, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  if (message.type === 'text') res.write(chunk({ content: message.text }));
  else if (message.type === 'done') {
    const usage = {
      prompt_tokens: message.promptTokens,
      completion_tokens: message.completionTokens,
      total_tokens: message.promptTokens + message.completionTokens,
    };
    res.end(
      `${chunk({}, message.finishReason)}data: ${JSON.stringify({ id: `floor-${message.id}`, object: 'chat.completion.chunk', choices: [], usage })}\n\ndata: [DONE]\n\n`,
    );
    pending.delete(message.id);
  }
});
worker.send({ type: 'init', ...init });

function listen() {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const request = JSON.parse(body);
      const id = nextId++;
      pending.set(id, res);
      worker.send({
        type: 'generate',
        id,
        messages: request.messages,
        maxTokens: request.max_tokens,
        temperature: request.temperature,
        thoughtBudget: 0,
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
    });
  });
  server.listen(0, '127.0.0.1', () =>
    console.log(JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })),
  );
}
process.on('SIGTERM', () => process.exit(0));
process.on('exit', () => worker.kill());
