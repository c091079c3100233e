import type { ContentPart, InputItem } from './dto/response-items';
import { outputText } from './response-object';

/**
 * A stored input item as `GET /v1/responses/{id}/input_items` returns it: OpenAI's ItemResource, the form the
 * API gives items back in, whatever shorthand the request used:
 *   - a message's content is always a list of parts (`"hi"` becomes `[{type: "input_text", text: "hi"}]`;
 *     clients map over it), an image part has its `detail` (default `auto`);
 *   - an assistant message is an output message: `output_text` parts with annotations and logprobs;
 *   - messages, function calls and their outputs carry a `status` (`completed`: they were input).
 * What was stored is left as it came (a continuation replays it); only the answer is shaped.
 */
export function asItemResource(item: InputItem & { id: string }): Record<string, unknown> {
  if (item.type === 'function_call' || item.type === 'function_call_output')
    return { ...item, status: item.status ?? 'completed' };
  if (item.type === 'reasoning') return item as unknown as Record<string, unknown>;
  const parts: ContentPart[] =
    typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content;
  if (item.role === 'assistant') {
    return { ...item, type: 'message', status: item.status ?? 'completed', content: parts.map(asOutputPart) };
  }
  return { ...item, type: 'message', status: item.status ?? 'completed', content: parts.map(asInputPart) };
}

function asOutputPart(part: ContentPart): Record<string, unknown> {
  if (part.type === 'refusal') return part;
  // An assistant turn written with input_text (or output_text without its lists) is the model's text all the same.
  return {
    ...outputText(String(part.text ?? '')),
    ...(Array.isArray(part.annotations) ? { annotations: part.annotations } : {}),
    ...(Array.isArray(part.logprobs) ? { logprobs: part.logprobs } : {}),
  };
}

function asInputPart(part: ContentPart): Record<string, unknown> {
  if (part.type === 'input_image') return { ...part, detail: part.detail ?? 'auto' };
  if (part.type === 'output_text') return { type: 'input_text', text: String(part.text ?? '') };
  return part;
}
