import { GatewayException } from '../../core/errors/gateway.exception';
import type { ChatMessage } from '../../core/chat-request';
import type { FunctionCallItem, HistoryItem } from './local-protocol';

/**
 * OpenAI chat messages -> node-llama-cpp's chat history, which the GGUF's chat template (through node-llama-cpp's
 * wrapper for it) renders. node-llama-cpp keeps a tool call and its result together in the model's response, so
 * each assistant `tool_calls` entry takes its result from the `tool` message that answers it, and an assistant
 * message after tool results continues the same model response. The last item is the response to generate: new
 * and empty, or, after tool results, the one holding those calls (the model then answers with the results in view).
 *
 * OpenAI's own pairing rules are checked (every call answered by a tool message, every tool message answering a
 * call of the assistant message before it), with its 400s, since here the gateway is the vendor.
 */
export function historyOf(messages: ChatMessage[]): HistoryItem[] {
  const history: HistoryItem[] = [];
  /** Calls of the latest assistant message that no tool message has answered yet, by id. */
  let unanswered = new Map<string, FunctionCallItem>();
  /** The index of the assistant message that made them. */
  let callsAt = 0;
  /** The model response the next assistant message continues (set right after tool results). */
  let continuing: Extract<HistoryItem, { type: 'model' }> | undefined;

  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      const call = unanswered.get(String(message.tool_call_id));
      if (!call) {
        throw new GatewayException(
          'invalid_request',
          `messages[${index}]: a 'tool' message must answer a tool call of the assistant message before it (no unanswered call has id '${String(message.tool_call_id)}').`,
          {
            param: `messages[${index}].tool_call_id`,
            wireCode: 'invalid_value',
          },
        );
      }
      call.result = textOf(message.content);
      unanswered.delete(String(message.tool_call_id));
      return;
    }
    requireAnswered(unanswered, callsAt);
    if (message.role === 'assistant') {
      const calls = callsOf(message, index);
      const text = textOf(message.content);
      const response = [...(text ? [text] : []), ...calls];
      const previous = messages[index - 1]?.role;
      if (continuing && previous === 'tool') continuing.response.push(...response);
      else history.push((continuing = { type: 'model', response }));
      unanswered = new Map(
        calls.map((call, n) => [String((message.tool_calls![n] as { id: unknown }).id), call]),
      );
      callsAt = index;
      return;
    }
    continuing = undefined;
    history.push(
      message.role === 'user'
        ? { type: 'user', text: textOf(message.content) }
        : { type: 'system', text: textOf(message.content) },
    );
  });
  requireAnswered(unanswered, callsAt);
  const last = messages[messages.length - 1];
  // After tool results the answer continues the response holding the calls; otherwise it is a new response.
  if (!(last?.role === 'tool' && continuing)) history.push({ type: 'model', response: [] });
  return history;
}

/** Characters of everything the history renders (an upper bound on its tokens, less the template's own). */
export function historyChars(history: HistoryItem[]): number {
  let chars = 0;
  for (const item of history) {
    if (item.type !== 'model') chars += item.text.length;
    else
      for (const part of item.response)
        chars +=
          typeof part === 'string'
            ? part.length
            : part.name.length +
              JSON.stringify(part.params ?? '').length +
              JSON.stringify(part.result ?? '').length;
  }
  return chars;
}

function callsOf(message: ChatMessage, index: number): FunctionCallItem[] {
  const calls = message.tool_calls ?? [];
  const seen = new Set<string>();
  return calls.map((call, n) => {
    const param = `messages[${index}].tool_calls[${n}]`;
    const {
      id,
      type,
      function: fn,
    } = (call ?? {}) as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } };
    if (typeof id !== 'string' || !id)
      throw invalidCall(`${param}.id must be a non-empty string.`, `${param}.id`);
    if (seen.has(id)) throw invalidCall(`${param}.id: '${id}' is used twice in the message.`, `${param}.id`);
    seen.add(id);
    if (type !== 'function') throw invalidCall(`${param}.type must be 'function'.`, `${param}.type`);
    if (typeof fn?.name !== 'string' || !fn.name)
      throw invalidCall(`${param}.function.name must be a non-empty string.`, `${param}.function.name`);
    if (typeof fn.arguments !== 'string')
      throw invalidCall(
        `${param}.function.arguments must be a string (JSON).`,
        `${param}.function.arguments`,
      );
    return {
      type: 'functionCall',
      name: fn.name,
      params: parseArguments(fn.arguments),
      result: undefined,
      ...(n === 0 ? { startsNewChunk: true } : {}),
    };
  });
}

/** A call's arguments as the model sees them again: the parsed JSON, or the text as it was when it is not JSON. */
function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function requireAnswered(unanswered: Map<string, FunctionCallItem>, index: number): void {
  if (unanswered.size === 0) return;
  throw new GatewayException(
    'invalid_request',
    `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...unanswered.keys()].join(', ')}`,
    { param: `messages[${index}]`, wireCode: 'invalid_value' },
  );
}

const invalidCall = (message: string, param: string) =>
  new GatewayException('invalid_request', message, { param, wireCode: 'invalid_value' });

/** A message's text: its string, or its text parts joined (other parts have no place in a text-only model's prompt). */
function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('\n');
}
