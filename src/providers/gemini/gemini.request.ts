import type { ChatRequest } from '../../core/chat-request';
import type { CallTarget } from '../provider-adapter';
import { constraint, requestedMaxTokens, requestedThinking } from '../shared/reasoning';
import {
  functionTools,
  mediaTypeOfUrl,
  mergeSameRole,
  parseArguments,
  parseDataUrl,
  partsOf,
  textOf,
  toolChoiceOf,
  type ImagePart,
  type OpenAIMessage,
} from '../../core/message-parts';

type Part = Record<string, unknown>;
interface Turn {
  role: 'user' | 'model';
  blocks: Part[];
}

/** Gemini's thinking budget must be inside the model's range (configured per model). */
export function validateForGemini(request: ChatRequest, target: CallTarget): void {
  const budget = requestedThinking(request);
  if (typeof budget !== 'number' || target.model.thinking !== 'native') return;
  const { min, max } = target.model.thinkingBudget;
  if (budget < min || budget > max) {
    throw constraint(
      `The model \`${request.model}\` accepts thinking.budget_tokens from ${min} to ${max} (got ${budget}).`,
      'thinking.budget_tokens',
    );
  }
}

/** OpenAI chat request -> Gemini generateContent body. */
export function toGeminiBody(request: ChatRequest, target: CallTarget): Record<string, unknown> {
  const messages = request.messages as unknown as OpenAIMessage[];
  // Gemini's functionResponse names the function; OpenAI's tool message only has the call id.
  const callNames = new Map<string, string>();
  for (const m of messages) for (const call of m.tool_calls ?? []) callNames.set(call.id, call.function.name);

  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .filter(Boolean);
  const turns = mergeSameRole<Turn, Part>(
    messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map((m) => toTurn(m, callNames)),
  );
  const body: Record<string, unknown> = {
    contents: turns.map(({ role, blocks }) => ({ role, parts: blocks })),
  };
  if (system.length) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };

  const generationConfig: Record<string, unknown> = {};
  if (request.temperature !== undefined && request.temperature !== null)
    generationConfig.temperature = request.temperature;
  if (request.top_p !== undefined && request.top_p !== null) generationConfig.topP = request.top_p;
  const maxTokens = requestedMaxTokens(request);
  if (maxTokens !== undefined) generationConfig.maxOutputTokens = maxTokens;
  if (request.stop)
    generationConfig.stopSequences = Array.isArray(request.stop) ? request.stop : [request.stop];
  if ((request.n ?? 1) > 1) generationConfig.candidateCount = request.n;
  const budget = requestedThinking(request);
  if (target.model.thinking === 'native' && typeof budget === 'number') {
    generationConfig.thinkingConfig = { thinkingBudget: budget, includeThoughts: true };
  } else if (
    target.model.thinking === 'native' &&
    budget === false &&
    target.model.thinkingBudget.min === 0
  ) {
    // 0 turns thinking off, on the models that allow it; others cannot stop thinking, so nothing is sent.
    generationConfig.thinkingConfig = { thinkingBudget: 0 };
  }
  if (Object.keys(generationConfig).length) body.generationConfig = generationConfig;

  const tools = functionTools(request.tools);
  if (tools.length) {
    // A tool's parameters are JSON Schema (OpenAI's and Anthropic's clients send `additionalProperties`, `$schema`,
    // `const`...): Gemini takes them as such in `parametersJsonSchema`. Its `parameters` is an OpenAPI subset whose
    // parser refuses every other member with a 400 ("Unknown name ... Cannot find field").
    body.tools = [
      {
        functionDeclarations: tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          ...(t.parameters ? { parametersJsonSchema: t.parameters } : {}),
        })),
      },
    ];
  }
  const choice = toolChoiceOf(request.tool_choice);
  if (choice?.mode === 'auto') body.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (choice?.mode === 'none') body.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (choice?.mode === 'required') body.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (choice?.mode === 'function')
    body.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  return body;
}

function toTurn(message: OpenAIMessage, callNames: Map<string, string>): Turn {
  if (message.role === 'tool') {
    const name = callNames.get(message.tool_call_id ?? '') ?? message.name ?? 'tool';
    return {
      role: 'user',
      blocks: [{ functionResponse: { name, response: { content: textOf(message.content) } } }],
    };
  }
  if (message.role === 'assistant') {
    const parts: Part[] = [];
    const text = textOf(message.content);
    if (text) parts.push({ text });
    for (const call of message.tool_calls ?? [])
      parts.push({
        functionCall: { name: call.function.name, args: parseArguments(call.function.arguments) },
      });
    return { role: 'model', blocks: parts };
  }
  const parts: Part[] = [];
  for (const part of partsOf(message.content)) {
    if (part.type === 'text' && (part as { text: string }).text)
      parts.push({ text: (part as { text: string }).text });
    else if (part.type === 'image_url') parts.push(imagePart(part as ImagePart));
  }
  return { role: 'user', blocks: parts };
}

function imagePart(part: ImagePart): Part {
  const url = part.image_url.url;
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
  return { fileData: { mimeType: mediaTypeOfUrl(url), fileUri: url } };
}
