/** Messages between the gateway and its local-model worker process (over the IPC channel). */

export interface WorkerInit {
  type: 'init';
  modelPath: string;
  runtimeDir: string;
  parallel: number;
  contextSize: number;
  threads: number;
}

export interface GenerateRequest {
  type: 'generate';
  id: number;
  messages: Array<{ role: string; content: string }>;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: string[];
}

export interface AbortRequest {
  type: 'abort';
  id: number;
}

export type ToWorker = WorkerInit | GenerateRequest | AbortRequest;

export type FromWorker =
  | { type: 'ready'; modelName: string }
  | { type: 'failed'; message: string }
  | { type: 'text'; id: number; text: string }
  | { type: 'done'; id: number; finishReason: 'stop' | 'length'; promptTokens: number; completionTokens: number }
  | { type: 'error'; id: number; message: string };
