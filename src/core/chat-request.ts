/**
 * The chat request as every adapter reads it: the provider contract's own type, so providers/ does not depend
 * on the chat controller's DTO classes (endpoints/chat-completions/dto validates requests into exactly this shape; its classes
 * implement these interfaces). Fields not declared here pass through as they came.
 */
/** OpenAI's limit on `tools` per chat completion ("A max of 128 functions are supported"). */
export const MAX_TOOLS = 128;

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string | Array<Record<string, unknown>> | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: unknown[];
}

export interface ChatRequest {
  [passthrough: string]: unknown;
  model: string;
  messages: ChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  /** The gateway's own reasoning option (never forwarded as is): see providers/shared/reasoning.ts. */
  thinking?: { type: 'enabled' | 'disabled'; budget_tokens?: number } | null;
}
