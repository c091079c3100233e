// Reference token counts from node-llama-cpp driven directly (run as a child process: Jest cannot
// import ESM). Input (argv[2], JSON): {modelPath, runtimeDir, history, text, functions?}. Output: {prompt, text}.
import { join } from 'node:path';
const { modelPath, runtimeDir, history, text, functions } = JSON.parse(process.argv[2]);
const { getLlama, LlamaChat } = await import(join(runtimeDir, 'node_modules/node-llama-cpp/dist/index.js'));
const llama = await getLlama({ build: 'never', gpu: false, logLevel: 'error' });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize: 1024 });
const chat = new LlamaChat({ contextSequence: context.getSequence() });
const prompt = chat.chatWrapper
  .generateContextState({ chatHistory: history, availableFunctions: functions })
  .contextText.tokenize(model.tokenizer).length;
process.stdout.write(JSON.stringify({ prompt, text: model.tokenize(text).length }));
process.exit(0);
