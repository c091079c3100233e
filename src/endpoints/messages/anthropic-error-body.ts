import type { ErrorShape } from '../../core/errors/error-shape';
import type { GatewayException } from '../../core/errors/gateway.exception';

/**
 * Anthropic's error `type` for each HTTP status (Anthropic's "Errors" page; the SDKs pick their error class by
 * the status, Claude Code also reads the type). Statuses Anthropic does not use get the nearest one's type.
 */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  431: 'request_too_large',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id?: string;
}

export function anthropicErrorType(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** `{"type":"error","error":{"type","message"},"request_id"}`: the body Anthropic's SDKs parse. */
export function anthropicErrorBody(exception: GatewayException, requestId?: string): AnthropicErrorBody {
  const body: AnthropicErrorBody = {
    type: 'error',
    error: { type: anthropicErrorType(exception.status), message: exception.message },
  };
  if (requestId) body.request_id = requestId;
  return body;
}

/** Anthropic's error shape: its body, and once streaming an `event: error` with the same body. */
export const anthropicErrors: ErrorShape = {
  body: (exception, requestId) => anthropicErrorBody(exception, requestId),
  streamEvent: (exception) => `event: error\ndata: ${JSON.stringify(anthropicErrorBody(exception))}\n\n`,
};
