import type { GatewayException } from '../../core/errors/gateway.exception';
import { parseErrorBody } from '../../core/json';
import { mapUpstreamError } from '../upstream-errors';

type Headers = Record<string, string | string[] | undefined>;

/**
 * The HTTP status each Bedrock Runtime exception stands for (the API reference's Errors sections), for exceptions
 * that arrive inside a stream, which carry only their type. Stream exception types are camelCase
 * (`throttlingException`), HTTP ones PascalCase; both are matched case-insensitively.
 */
const STATUS_OF_EXCEPTION: Record<string, number> = {
  throttlingexception: 429,
  modelnotreadyexception: 429,
  servicequotaexceededexception: 400,
  validationexception: 400,
  accessdeniedexception: 403,
  unrecognizedclientexception: 403,
  invalidsignatureexception: 403,
  expiredtokenexception: 403,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 408,
  modelerrorexception: 424,
  modelstreamerrorexception: 424,
  internalserverexception: 500,
  serviceunavailableexception: 503,
};

/** `x-amzn-errortype: ThrottlingException:http://internal.amazon.com/coral/...` -> `ThrottlingException`. */
function errorTypeOf(headers: Headers): string | undefined {
  const value = headers['x-amzn-errortype'];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.split(':')[0] || undefined;
}

/**
 * A Bedrock error answer (`{"message": ...}`, its type in `x-amzn-errortype`) -> the gateway's error for its status,
 * by the common upstream policy (upstream-errors.ts): ThrottlingException's 429 is retried like any other 429, a
 * ValidationException's 400 passes Bedrock's words on, a credential or access failure is the deployment's fault.
 */
export function bedrockHttpError(
  backendId: string,
  status: number,
  text: string,
  headers: Headers,
  secrets: string[],
): GatewayException {
  const body = parseErrorBody(text) as { message?: unknown; Message?: unknown } | undefined;
  const message = body?.message ?? body?.Message;
  const type = errorTypeOf(headers);
  return mapUpstreamError({
    backendId,
    status,
    message: typeof message === 'string' ? withType(type, message) : type,
    code: null,
    param: null,
    headers,
    secrets,
  });
}

/** An exception frame inside a stream -> the in-band error of the status its type stands for. */
export function bedrockStreamException(
  backendId: string,
  type: string,
  message: string | undefined,
  secrets: string[],
): GatewayException {
  const status = STATUS_OF_EXCEPTION[type.toLowerCase()] ?? 500;
  return bedrockStatusError(backendId, status, withType(type, message), secrets);
}

/** An in-band error whose status is known -> the gateway's error for it. */
export function bedrockStatusError(
  backendId: string,
  status: number,
  message: string | undefined,
  secrets: string[],
): GatewayException {
  return mapUpstreamError({ backendId, status, message, code: null, param: null, headers: {}, secrets });
}

function withType(type: string | undefined, message: string | undefined): string | undefined {
  if (!type) return message;
  return message ? `${type}: ${message}` : type;
}
