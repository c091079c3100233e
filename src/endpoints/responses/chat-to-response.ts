import type { ChatCompletion } from '../../core/openai-types';
import {
  functionCallItem,
  messageItem,
  newId,
  reasoningItem,
  refusalItem,
  responseUsage,
  statusOf,
  type OutputItem,
  type ResponseEnvelope,
} from './response-object';
import type { ToolNames } from './responses-to-chat';

/** A translated answer (OpenAI chat.completion) -> the Response: reasoning, message and function_call items, in that order. */
export function chatToResponse(
  completion: ChatCompletion,
  envelope: ResponseEnvelope,
  names: ToolNames,
): Record<string, unknown> {
  const choice = completion.choices[0];
  const message = (choice?.message ?? {}) as {
    content?: unknown;
    reasoning_content?: unknown;
    refusal?: unknown;
    tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }>;
  };
  const output: OutputItem[] = [];
  if (typeof message.reasoning_content === 'string' && message.reasoning_content)
    output.push(reasoningItem(newId('rs'), message.reasoning_content));
  if (typeof message.content === 'string' && message.content)
    output.push(messageItem(newId('msg'), message.content));
  if (typeof message.refusal === 'string' && message.refusal)
    output.push(refusalItem(newId('msg'), message.refusal));
  for (const call of message.tool_calls ?? []) {
    output.push(
      functionCallItem(
        newId('fc'),
        call.id ?? newId('fc'),
        call.function?.name ?? '',
        call.function?.arguments ?? '',
        names,
      ),
    );
  }
  return envelope.build({
    ...statusOf(choice?.finish_reason),
    output,
    usage: responseUsage(completion.usage),
  });
}
