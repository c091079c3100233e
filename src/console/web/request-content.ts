// How the request log's kept content is shown: the messages of the request and of the answer as text, whatever the
// API's shape (chat messages and content parts, Anthropic's system and content blocks, Responses' input and
// instructions, embeddings' input). No DOM here: the page renders what this returns as text nodes only.
import type { TruncatedSide } from './request-log';

/** One message as the page shows it: who said it and what, as text. */
export interface ShownMessage {
  role: string;
  text: string;
}

export function isTruncated(side: unknown): side is TruncatedSide {
  return (
    typeof side === 'object' &&
    side !== null &&
    (side as TruncatedSide).truncated === true &&
    typeof (side as TruncatedSide).text === 'string'
  );
}

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;

/** A content value as text: a string as it is, text parts and blocks by their text, anything else as JSON. */
export function textOf(content: unknown): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) => {
        const fields = record(part);
        if (typeof part === 'string') return part;
        if (fields && typeof fields.text === 'string') return fields.text;
        return JSON.stringify(part);
      })
      .join('\n');
  return JSON.stringify(content, null, 2);
}

function messageOf(value: unknown, fallbackRole: string): ShownMessage {
  const fields = record(value);
  if (!fields) return { role: fallbackRole, text: textOf(value) };
  const role =
    typeof fields.role === 'string'
      ? fields.role
      : typeof fields.type === 'string'
        ? fields.type
        : fallbackRole;
  const parts = [textOf(fields.content ?? (fields.text as unknown) ?? (fields.output as unknown))];
  if (fields.tool_calls !== undefined)
    parts.push(`tool calls: ${JSON.stringify(fields.tool_calls, null, 2)}`);
  if (fields.reasoning !== undefined && fields.reasoning !== null)
    parts.unshift(`(reasoning) ${textOf(fields.reasoning)}`);
  return { role, text: parts.filter(Boolean).join('\n') };
}

/** The request's messages (system first where the API keeps it apart); null when the body has none to show. */
export function requestMessages(body: unknown): ShownMessage[] | null {
  const fields = record(body);
  if (!fields) return null;
  const shown: ShownMessage[] = [];
  if (fields.system !== undefined) shown.push({ role: 'system', text: textOf(fields.system) });
  if (typeof fields.instructions === 'string')
    shown.push({ role: 'instructions', text: fields.instructions });
  if (Array.isArray(fields.messages)) shown.push(...fields.messages.map((m) => messageOf(m, 'user')));
  else if (Array.isArray(fields.input)) shown.push(...fields.input.map((m) => messageOf(m, 'input')));
  else if (fields.input !== undefined) shown.push({ role: 'input', text: textOf(fields.input) });
  return shown.length > 0 ? shown : null;
}

/** The answer's messages (the log keeps a list of them, or a stream's text as one); null when there is no list. */
export function answerMessages(answer: unknown): ShownMessage[] | null {
  if (typeof answer === 'string') return [{ role: 'assistant', text: answer }];
  if (!Array.isArray(answer)) return null;
  return answer.map((m) => messageOf(m, 'assistant'));
}
