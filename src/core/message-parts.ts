/** Helpers for OpenAI message content, shared by the adapters that rebuild messages for other vendors. */
export interface TextPart {
  type: 'text';
  text: string;
}
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: string };
}
export type ContentPart = TextPart | ImagePart | { type: string; [key: string]: unknown };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** An OpenAI message as the gateway validated it (extra fields such as thinking_blocks kept). */
export interface OpenAIMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | ContentPart[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  thinking_blocks?: Array<Record<string, unknown>>;
  [extra: string]: unknown;
}

export function partsOf(content: OpenAIMessage['content']): ContentPart[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return Array.isArray(content) ? content : [];
}

/** All the text of a message's content (system prompts, tool results). */
export function textOf(content: OpenAIMessage['content']): string {
  return partsOf(content)
    .filter((part): part is TextPart => part.type === 'text' && typeof (part as TextPart).text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/** `data:image/png;base64,AAAA` -> its media type and base64 data; null for any other URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1], data: match[2] } : null;
}

/** A best guess at an image URL's media type from its extension (vendors want one for URL images). */
export function mediaTypeOfUrl(url: string): string {
  const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  return (
    { png: 'image/png', gif: 'image/gif', webp: 'image/webp', jpg: 'image/jpeg', jpeg: 'image/jpeg' }[
      extension ?? ''
    ] ?? 'image/jpeg'
  );
}

/** Tool-call arguments are a JSON string in OpenAI's format and an object elsewhere. */
export function parseArguments(args: string | undefined): Record<string, unknown> {
  if (!args) return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { value: parsed };
  } catch {
    return { raw: args };
  }
}

/** Merges consecutive turns of the same role (Anthropic and Gemini want alternating turns). */
export function mergeSameRole<T extends { role: string }, B>(
  turns: Array<T & { blocks: B[] }>,
): Array<T & { blocks: B[] }> {
  const out: Array<T & { blocks: B[] }> = [];
  for (const turn of turns) {
    const last = out[out.length - 1];
    if (last && last.role === turn.role) last.blocks.push(...turn.blocks);
    else out.push({ ...turn, blocks: [...turn.blocks] });
  }
  return out;
}

/**
 * Anthropic's prompt-cache breakpoint (`{type: "ephemeral", ttl?: "5m" | "1h"}`) as several SDKs send it on chat
 * completions: on a content part, a message or a tool. Kept as the client wrote it (Anthropic checks it), when it is
 * an object.
 */
export type CacheControl = Record<string, unknown>;

export function cacheControlOf(holder: unknown): CacheControl | undefined {
  const value = (holder as { cache_control?: unknown } | null | undefined)?.cache_control;
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as CacheControl)
    : undefined;
}

/** The breakpoint a message carries for its text: its own, else the last of its text parts'. */
export function messageCacheControl(message: OpenAIMessage): CacheControl | undefined {
  let found = cacheControlOf(message);
  if (found) return found;
  for (const part of partsOf(message.content)) found = cacheControlOf(part) ?? found;
  return found;
}

/** The OpenAI tools a request carries, as (name, description, JSON schema, cache breakpoint). */
export function functionTools(tools: unknown): Array<{
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  cacheControl?: CacheControl;
}> {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter(
      (tool: { type?: string; function?: { name?: unknown } }) =>
        tool?.type === 'function' && typeof tool.function?.name === 'string',
    )
    .map(
      (tool: { function: { name: string; description?: string; parameters?: Record<string, unknown> } }) => ({
        name: tool.function.name,
        description: tool.function.description,
        parameters: tool.function.parameters,
        cacheControl: cacheControlOf(tool),
      }),
    );
}

/** OpenAI `tool_choice` reduced to what every vendor can express. */
export type ToolChoice =
  { mode: 'auto' | 'none' | 'required' } | { mode: 'function'; name: string } | undefined;

export function toolChoiceOf(choice: unknown): ToolChoice {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { mode: choice };
  const name = (choice as { function?: { name?: unknown } } | undefined)?.function?.name;
  return typeof name === 'string' ? { mode: 'function', name } : undefined;
}
