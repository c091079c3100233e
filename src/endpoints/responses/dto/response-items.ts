/**
 * The Responses API's input items as the gateway reads them (OpenAI's `ResponseInputItem`). Only the fields the
 * translation reads are typed; items keep every other field, so what is stored and replayed is what came.
 */
export interface MessageItem {
  type?: 'message';
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | ContentPart[];
  status?: string;
}
export interface ContentPart {
  type: string;
  text?: string;
  refusal?: string;
  image_url?: string | null;
  detail?: string;
  file_data?: string;
  file_url?: string;
  filename?: string;
  [key: string]: unknown;
}
export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  namespace?: string;
  status?: string;
}
export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: string | ContentPart[];
  status?: string;
}
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: string; text: string }>;
  encrypted_content?: string | null;
  status?: string;
}
export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);
const SUPPORTED = new Set(['message', 'function_call', 'function_call_output', 'reasoning']);

/** Fields of the content parts the translation reads (OpenAI's `ResponseInputContent` and output parts): their kinds. */
const PART_FIELDS: Record<string, Record<string, 'string' | 'optional string'>> = {
  input_text: { text: 'string' },
  output_text: { text: 'string' },
  summary_text: { text: 'string' },
  reasoning_text: { text: 'string' },
  refusal: { refusal: 'string' },
  input_image: { image_url: 'optional string', file_id: 'optional string', detail: 'optional string' },
  input_file: {
    file_data: 'optional string',
    file_id: 'optional string',
    file_url: 'optional string',
    filename: 'optional string',
  },
};

/**
 * What is wrong with a content field (a string, or parts: objects with a string `type`, the known types with their
 * fields), or null; the problem starts with a space or with the part's index. Parts of other types pass on.
 */
function partsProblem(content: unknown): string | null {
  if (typeof content === 'string') return null;
  if (!Array.isArray(content)) return ' must be a string or an array of content parts';
  for (let i = 0; i < content.length; i++) {
    const part = content[i] as Record<string, unknown> | null;
    if (typeof part !== 'object' || part === null || Array.isArray(part) || typeof part.type !== 'string')
      return `[${i}] must be an object with a string "type"`;
    const fields = Object.hasOwn(PART_FIELDS, part.type) ? PART_FIELDS[part.type] : {};
    for (const [field, kind] of Object.entries(fields)) {
      const value = part[field];
      if (kind === 'string' ? typeof value !== 'string' : value != null && typeof value !== 'string')
        return `[${i}].${field} must be a string`;
    }
  }
  return null;
}

/** What is wrong with `input`, or null: a string, or items of the kinds this gateway serves. */
export function inputProblem(input: unknown): string | null {
  if (typeof input === 'string') return null;
  if (!Array.isArray(input)) return 'must be a string or an array of input items';
  for (let i = 0; i < input.length; i++) {
    const item = input[i] as Record<string, unknown> | null;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return `[${i}] must be an object`;
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (typeof type !== 'string') return `[${i}].type is required`;
    if (!SUPPORTED.has(type))
      return `[${i}].type "${type}" is not supported by this gateway (message, function_call, function_call_output, reasoning)`;
    if (type === 'message') {
      if (!ROLES.has(String(item.role)))
        return `[${i}].role must be one of: user, assistant, system, developer`;
      const problem = partsProblem(item.content);
      if (problem) return `[${i}].content${problem}`;
    } else if (type === 'function_call') {
      if (
        typeof item.call_id !== 'string' ||
        typeof item.name !== 'string' ||
        typeof item.arguments !== 'string'
      )
        return `[${i}] needs call_id, name and arguments (strings)`;
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') return `[${i}].call_id is required`;
      const problem = partsProblem(item.output);
      if (problem) return `[${i}].output${problem}`;
    } else {
      if (!Array.isArray(item.summary)) return `[${i}].summary is required (an array)`;
      const problem = partsProblem(item.summary);
      if (problem) return `[${i}].summary${problem}`;
    }
  }
  return null;
}

/** The items of `input` (a string is one user message). */
export function itemsOf(input: string | InputItem[]): InputItem[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return input.map((item) => (item.type === undefined ? { ...item, type: 'message' } : item)) as InputItem[];
}
