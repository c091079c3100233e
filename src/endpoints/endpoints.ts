import type { Type } from '@nestjs/common';
import { openAiErrors, type ErrorShape } from '../core/errors/error-shape';
import { isMcpPath, mcpErrors } from '../mcp/mcp-error-shape';
import type { EndpointRoute } from '../gateway/endpoint-spec';
import type { Operation } from '../openapi/operation';
import { chatCompletionsOperations } from './chat-completions/chat-completions.openapi';
import { embeddingsOperations } from './embeddings/embeddings.openapi';
import { messagesOperations } from './messages/messages.openapi';
import { responsesOperations } from './responses/responses.openapi';
import { ChatModule } from './chat-completions/chat.module';
import { chatCompletionsEndpoint } from './chat-completions/chat-completions.endpoint';
import { EmbeddingsModule } from './embeddings/embeddings.module';
import { embeddingsEndpoint } from './embeddings/embeddings.endpoint';
import { MessagesModule } from './messages/messages.module';
import { messagesEndpoint } from './messages/messages.endpoint';
import { ResponsesModule } from './responses/responses.module';
import { responsesRoute } from './responses/responses.service';

/** An endpoint as the rest of the gateway knows it: its Nest module (controller, providers), route and OpenAPI entries. */
interface Registered {
  module: Type;
  route: EndpointRoute;
  operations: Operation[];
}

/**
 * Every client API the gateway serves, one line each. Express tries routes in registration order, so the hot route
 * comes first. The app registers the modules, the OpenAPI document lists the operations; the usage recorder is put in front of the billed routes; the error
 * filter, the drain's 503 and the body reader ask `endpointAt` for a path's error shape and whether its bytes are kept.
 */
export const ENDPOINTS: readonly Registered[] = [
  { module: ChatModule, route: chatCompletionsEndpoint, operations: chatCompletionsOperations },
  { module: EmbeddingsModule, route: embeddingsEndpoint, operations: embeddingsOperations },
  { module: MessagesModule, route: messagesEndpoint, operations: messagesOperations },
  { module: ResponsesModule, route: responsesRoute, operations: responsesOperations },
];

/** The endpoint a path belongs to (its own path or one under it: /v1/messages/count_tokens, /v1/responses/{id}). */
export function endpointAt(path: string): EndpointRoute | undefined {
  for (const { route } of ENDPOINTS)
    if (path.startsWith(route.path) && (path.length === route.path.length || path[route.path.length] === '/'))
      return route;
  return undefined;
}

/**
 * The error shape of a path: its endpoint's, JSON-RPC's under /mcp (docs/mcp.md: every answer there is one, a path no
 * route serves included), else OpenAI's.
 */
export function errorShapeAt(path: string): ErrorShape {
  if (isMcpPath(path)) return mcpErrors;
  return endpointAt(path)?.errors ?? openAiErrors;
}
