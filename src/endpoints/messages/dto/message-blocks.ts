/**
 * The Messages API's content blocks as the gateway reads them (Anthropic's `ContentBlockParam`). Only what the
 * translation reads is typed; every block keeps its other fields, so a native call sends them on unchanged.
 */
export interface TextBlock {
  type: 'text';
  text: string;
}
export interface ImageBlock {
  type: 'image';
  source:
    | { type: 'base64'; media_type: string; data: string }
    | { type: 'url'; url: string }
    | { type: string; [key: string]: unknown };
}
export interface DocumentBlock {
  type: 'document';
  source: { type: string; media_type?: string; data?: unknown; url?: string; content?: unknown };
  title?: string | null;
}
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | ContentBlock[];
  is_error?: boolean;
}
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}
export type ContentBlock =
  | TextBlock
  | ImageBlock
  | DocumentBlock
  | ToolUseBlock
  | ToolResultBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | { type: string; [key: string]: unknown };

const REQUIRED_FIELDS: Record<string, Record<string, 'string' | 'object'>> = {
  text: { text: 'string' },
  image: { source: 'object' },
  document: { source: 'object' },
  tool_use: { id: 'string', name: 'string', input: 'object' },
  tool_result: { tool_use_id: 'string' },
  thinking: { thinking: 'string', signature: 'string' },
  redacted_thinking: { data: 'string' },
};

/** The fields each kind of source needs (Anthropic's `Base64ImageSource`, `URLImageSource`, `PlainTextSource`...). */
const SOURCE_FIELDS: Record<'image' | 'document', Record<string, Record<string, 'string' | 'text'>>> = {
  image: {
    base64: { media_type: 'string', data: 'string' },
    url: { url: 'string' },
    file: { file_id: 'string' },
  },
  document: {
    base64: { data: 'string' },
    text: { data: 'string' },
    content: { content: 'text' },
    url: { url: 'string' },
    file: { file_id: 'string' },
  },
};

/** A nested problem after its field's name: `[0].text: ...` goes on directly, `must be ...` after a space. */
function joined(problem: string): string {
  return problem.startsWith('[') ? problem : ` ${problem}`;
}

/** What is wrong with an image's or a document's `source` (an object already), or null. */
function sourceProblem(kind: 'image' | 'document', source: Record<string, unknown>): string | null {
  const fields =
    typeof source.type === 'string' && Object.hasOwn(SOURCE_FIELDS[kind], source.type)
      ? SOURCE_FIELDS[kind][source.type]
      : undefined;
  if (!fields) return `.type must be one of: ${Object.keys(SOURCE_FIELDS[kind]).join(', ')}`;
  for (const [field, wanted] of Object.entries(fields)) {
    const value = source[field];
    if (wanted === 'string' ? typeof value !== 'string' : typeof value !== 'string' && !Array.isArray(value))
      return `.${field}: Field required (${wanted === 'string' ? 'string' : 'a string or an array of blocks'})`;
    if (wanted === 'text' && Array.isArray(value)) {
      const nested = contentProblem(value);
      if (nested) return `.${field}${joined(nested)}`;
    }
  }
  return null;
}

/** What is wrong with a message's (or `system`'s) content, or null. Unknown block types pass (newer features). */
export function contentProblem(content: unknown, textOnly = false): string | null {
  if (typeof content === 'string') return null;
  if (!Array.isArray(content)) return 'must be a string or an array of content blocks';
  for (let i = 0; i < content.length; i++) {
    const block = content[i] as Record<string, unknown> | null;
    if (typeof block !== 'object' || block === null || typeof block.type !== 'string')
      return `[${i}] must be an object with a string "type"`;
    if (textOnly && block.type !== 'text') return `[${i}] must be a text block`;
    for (const [field, kind] of Object.entries(REQUIRED_FIELDS[block.type] ?? {})) {
      const value = block[field];
      if (kind === 'string' ? typeof value !== 'string' : typeof value !== 'object' || value === null)
        return `[${i}].${field}: Field required (${kind})`;
    }
    if (block.type === 'image' || block.type === 'document') {
      const problem = sourceProblem(block.type, block.source as Record<string, unknown>);
      if (problem) return `[${i}].source${problem}`;
    }
    if (block.type === 'tool_result' && block.content !== undefined) {
      const nested = contentProblem(block.content);
      if (nested) return `[${i}].content${joined(nested)}`;
    }
  }
  return null;
}
