import type { ChatRequest } from '../../core/chat-request';
import type { CallTarget } from '../provider-adapter';
import { constraint, requestedMaxTokens } from '../shared/reasoning';
import {
  cacheControlOf,
  functionTools,
  messageCacheControl,
  mergeSameRole,
  parseArguments,
  parseDataUrl,
  partsOf,
  textOf,
  toolChoiceOf,
  type ImagePart,
  type OpenAIMessage,
} from '../../core/message-parts';

type Block = Record<string, unknown>;
interface Turn {
  role: 'user' | 'assistant';
  blocks: Block[];
}

/** Converse's image formats (ImageBlock.format), by media type. */
const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** What Converse cannot take from a chat request, refused before any call (Bedrock would answer a 400 anyway). */
export function validateForConverse(request: ChatRequest): void {
  if ((request.n ?? 1) > 1) throw constraint('Bedrock Converse returns one choice: `n` must be 1.', 'n');
  for (const message of request.messages as unknown as OpenAIMessage[]) {
    for (const part of partsOf(message.content)) {
      if (part.type !== 'image_url') continue;
      const inline = parseDataUrl((part as ImagePart).image_url.url);
      if (!inline || !IMAGE_FORMATS[inline.mediaType])
        throw constraint(
          'Bedrock Converse takes images inline only (a data: URL of a PNG, JPEG, GIF or WebP image).',
          'messages',
        );
    }
  }
}

/**
 * OpenAI chat request -> Converse's body (`POST /model/<id>/converse[-stream]`): system and developer messages
 * become `system` text blocks, turns alternate (same-role turns merged), tool calls and results become
 * `toolUse`/`toolResult` blocks, sampling goes in `inferenceConfig`, tools in `toolConfig`. Converse has no
 * `tool_choice: "none"`: its tools are then left out, unless the conversation already holds tool blocks (Converse
 * requires `toolConfig` with them), where they stay offered.
 */
export function toConverseBody(request: ChatRequest, target: CallTarget): Record<string, unknown> {
  const messages = request.messages as unknown as OpenAIMessage[];
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .flatMap((m) => {
      const text = textOf(m.content);
      if (!text) return [];
      return messageCacheControl(m) ? [{ text }, CACHE_POINT] : [{ text }];
    });
  const turns = mergeSameRole<Turn, Block>(
    messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map(toTurn),
  );
  const body: Record<string, unknown> = {
    messages: turns.map(({ role, blocks }) => ({ role, content: blocks })),
  };
  if (system.length) body.system = system;

  const inference: Record<string, unknown> = {
    maxTokens: requestedMaxTokens(request) ?? target.model.maxTokens,
  };
  if (typeof request.temperature === 'number') inference.temperature = request.temperature;
  if (typeof request.top_p === 'number') inference.topP = request.top_p;
  if (request.stop) inference.stopSequences = Array.isArray(request.stop) ? request.stop : [request.stop];
  body.inferenceConfig = inference;

  const tools = functionTools(request.tools);
  const choice = toolChoiceOf(request.tool_choice);
  const holdsToolBlocks = turns.some((turn) => turn.blocks.some((b) => 'toolUse' in b || 'toolResult' in b));
  if (tools.length && (choice?.mode !== 'none' || holdsToolBlocks)) {
    const toolConfig: Record<string, unknown> = {
      tools: tools.flatMap((tool) => {
        const spec = {
          toolSpec: {
            name: tool.name,
            ...(tool.description ? { description: tool.description } : {}),
            inputSchema: { json: tool.parameters ?? { type: 'object', properties: {} } },
          },
        };
        return tool.cacheControl ? [spec, CACHE_POINT] : [spec];
      }),
    };
    if (choice?.mode === 'auto') toolConfig.toolChoice = { auto: {} };
    else if (choice?.mode === 'required') toolConfig.toolChoice = { any: {} };
    else if (choice?.mode === 'function') toolConfig.toolChoice = { tool: { name: choice.name } };
    body.toolConfig = toolConfig;
  }
  return body;
}

/**
 * Converse's prompt-cache breakpoint: a block of its own after the content it closes (in `system`, a message's
 * `content` or `toolConfig.tools`), where Anthropic marks the content itself with `cache_control`. Converse has one
 * kind (its default lifetime): a `ttl` asked for is not carried.
 */
const CACHE_POINT = { cachePoint: { type: 'default' } } as const;

/**
 * A chat message as a turn, its cache breakpoints (Anthropic's `cache_control`, as chat SDKs send it) as cachePoint
 * blocks: after a marked content part, and after the whole message when the message itself, or an assistant's or
 * tool's text part (one block here), is marked.
 */
function toTurn(message: OpenAIMessage): Turn {
  const turn = unmarkedTurn(message);
  const own = message.role === 'user' ? cacheControlOf(message) : messageCacheControl(message);
  const last = turn.blocks[turn.blocks.length - 1];
  if (own && last && !('cachePoint' in last)) turn.blocks.push(CACHE_POINT);
  return turn;
}

function unmarkedTurn(message: OpenAIMessage): Turn {
  if (message.role === 'tool') {
    return {
      role: 'user',
      blocks: [
        {
          toolResult: {
            toolUseId: message.tool_call_id,
            content: [{ text: textOf(message.content) }],
          },
        },
      ],
    };
  }
  if (message.role === 'assistant') {
    const blocks: Block[] = [];
    const text = textOf(message.content);
    if (text) blocks.push({ text });
    for (const call of message.tool_calls ?? []) {
      blocks.push({
        toolUse: {
          toolUseId: call.id,
          name: call.function.name,
          input: parseArguments(call.function.arguments),
        },
      });
    }
    return { role: 'assistant', blocks };
  }
  const blocks: Block[] = [];
  for (const part of partsOf(message.content)) {
    if (part.type === 'text' && (part as { text: string }).text)
      blocks.push({ text: (part as { text: string }).text });
    else if (part.type === 'image_url') {
      const inline = parseDataUrl((part as ImagePart).image_url.url)!; // checked by validateForConverse
      blocks.push({ image: { format: IMAGE_FORMATS[inline.mediaType], source: { bytes: inline.data } } });
    } else continue;
    if (cacheControlOf(part)) blocks.push(CACHE_POINT);
  }
  return { role: 'user', blocks };
}
