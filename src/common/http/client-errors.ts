import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayException } from '../../core/errors/gateway.exception';

/**
 * Requests Node refuses before Express sees them (headers too large, headers too slow, a malformed request
 * line) get OpenAI's error body like every other error; Node's own answer is a bare status line. The
 * connection is closed after it, as Node does.
 */
export function answerClientErrorsInOpenAIShape(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const exception = exceptionFor(error.code);
    const body = JSON.stringify(exception.toBody());
    socket.end(
      `HTTP/1.1 ${exception.status} ${REASONS[exception.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

function exceptionFor(code: string | undefined): GatewayException {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new GatewayException('request_header_too_large', 'The request headers are too large.');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new GatewayException('request_timeout', 'The request headers did not arrive in time.');
  return new GatewayException('invalid_request', 'The request is not valid HTTP.', { wireCode: null });
}
