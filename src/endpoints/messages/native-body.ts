import type { Deployment } from '../../routing/model-router.service';
import type { ContentBlock } from './dto/message-blocks';
import type { MessagesPromptDto } from './dto/messages-request.dto';
import { isGatewaySignature } from './translated-thinking';
import { spliceJson, type JsonSource } from '../../core/json-splice';
import { speaksNatively } from '../../providers/provider-adapter';

/** The deployment takes Messages requests as they are (an Anthropic backend, or Claude on a cloud's). */
export function speaksMessages(deployment: Deployment): boolean {
  return speaksNatively(deployment.backend.adapter, 'messages', deployment.upstreamModel);
}

/**
 * The client's body for an Anthropic backend: the bytes it sent when nothing needs changing (signatures are
 * checked against what the model wrote; a re-serialised body is a risk for no gain), otherwise its JSON with
 * the deployment's model name and without thinking blocks the gateway itself signed (they came from another
 * family, and Anthropic refuses signatures it did not make). A big body with only the model changed is put
 * together from the client's bytes (providers/shared/json-splice.ts).
 */
export function nativeBody(
  dto: MessagesPromptDto,
  source: JsonSource | undefined,
  upstreamModel: string,
): string | Buffer {
  const foreign = dto.messages.some(
    (message) => Array.isArray(message.content) && message.content.some(isTranslatedThinking),
  );
  if (source && !foreign && upstreamModel === dto.model) return withoutBom(source.bytes);
  const messages = foreign
    ? dto.messages.map((message) =>
        Array.isArray(message.content)
          ? { ...message, content: message.content.filter((block) => !isTranslatedThinking(block)) }
          : message,
      )
    : dto.messages;
  const body = { ...dto, model: upstreamModel, messages };
  return (source && spliceJson(source, body)) ?? JSON.stringify(body);
}

/** JSON text may not start with a byte order mark (RFC 8259 section 8.1); the client's was ignored, so is dropped. */
function withoutBom(bytes: Buffer): Buffer {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}

function isTranslatedThinking(block: ContentBlock): boolean {
  return block.type === 'thinking' && isGatewaySignature((block as { signature?: unknown }).signature);
}
