import { openAiErrors } from '../../core/errors/error-shape';
import { chatClientUsage } from '../../core/openai-types';
import type { EndpointSpec } from '../../gateway/endpoint-spec';
import type { ChatCompletionRequestDto } from './dto/chat-completion-request.dto';
import { OpenAiChunkEncoder } from './openai-chunk-encoder';

/**
 * POST /v1/chat/completions: the gateway's canonical request itself. OpenAI chunks to every deployment, nothing
 * native (every family translates from it); pass-through families copy unchanged members from the client's bytes.
 */
export const chatCompletionsEndpoint: EndpointSpec<ChatCompletionRequestDto> = {
  path: '/v1/chat/completions',
  billedAs: 'chat.completions',
  errors: openAiErrors,
  keepsClientBytes: true,
  open(request, client) {
    const includeUsage = request.stream_options?.include_usage === true;
    return {
      kind: 'chat',
      request,
      wire: {
        streamEncoder: () => new OpenAiChunkEncoder(request.model, includeUsage),
        source: client.source,
      },
      reply: (answer) =>
        answer.completion.usage
          ? { ...answer.completion, usage: chatClientUsage(answer.completion.usage) }
          : answer.completion,
    };
  },
};
