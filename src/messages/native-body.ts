import type { Deployment } from '../routing/model-router.service';
import type { ContentBlock } from './dto/message-blocks';
import type { MessagesPromptDto } from './dto/messages-request.dto';
import { isGatewaySignature } from './translated-thinking';

/** The deployment takes Messages requests as they are (an Anthropic backend). */
export function speaksMessages(deployment: Deployment): boolean {
  return deployment.backend.adapter.nativeApis?.includes('messages') === true;
}

/**
 * The client's body for an Anthropic backend: the bytes it sent when nothing needs changing (signatures are
 * checked against what the model wrote; a re-serialised body is a risk for no gain), otherwise its JSON with
 * the deployment's model name and without thinking blocks the gateway itself signed (they came from another
 * family, and Anthropic refuses signatures it did not make).
 */
export function nativeBody(dto: MessagesPromptDto, rawBody: Buffer | undefined, upstreamModel: string): string {
  const foreign = dto.messages.some((message) => Array.isArray(message.content) && message.content.some(isTranslatedThinking));
  if (rawBody && !foreign && upstreamModel === dto.model) return rawBody.toString('utf8');
  const messages = foreign
    ? dto.messages.map((message) => (Array.isArray(message.content) ? { ...message, content: message.content.filter((block) => !isTranslatedThinking(block)) } : message))
    : dto.messages;
  return JSON.stringify({ ...dto, model: upstreamModel, messages });
}

function isTranslatedThinking(block: ContentBlock): boolean {
  return block.type === 'thinking' && isGatewaySignature((block as { signature?: unknown }).signature);
}
