// node-llama-cpp driven directly, in a process of its own pinned like the gateway's worker, so the comparison with
// the worker is like for like. It times each call itself (nothing of the IPC that carries the request is measured).
// Messages: {init: {runtimeDir, modelPath, threads, cpus}} -> {ready}; {generate: {text, maxTokens}} -> {ttft, tokensPerSecond, tokens}.
import { join } from 'node:path';

let chat;
let sequence;
process.on('message', async (message) => {
  if (message.init) {
    const { runtimeDir, modelPath, threads, cpus, pinModule } = message.init;
    if (cpus) (await import(pinModule)).pinThisProcess(cpus);
    const { getLlama, LlamaChat } = await import(
      join(runtimeDir, 'node_modules/node-llama-cpp/dist/index.js')
    );
    const llama = await getLlama({ build: 'never', gpu: false, logLevel: 'error' });
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ sequences: 1, contextSize: 2048, threads });
    sequence = context.getSequence();
    chat = new LlamaChat({ contextSequence: sequence }); // made once, as the worker does
    process.send({ ready: true });
    return;
  }
  const { text, maxTokens } = message.generate;
  const started = performance.now();
  let first = 0;
  let tokens = 0;
  await chat.generateResponse(
    [
      { type: 'user', text },
      { type: 'model', response: [] },
    ],
    {
      maxTokens,
      temperature: 0,
      onToken: (t) => {
        tokens += t.length;
      },
      onTextChunk: () => {
        if (!first) first = performance.now();
      },
    },
  );
  const ended = performance.now();
  await sequence.clearHistory();
  process.send({ ttft: first - started, tokensPerSecond: (tokens - 1) / ((ended - first) / 1000), tokens });
});
process.on('disconnect', () => process.exit(0));
