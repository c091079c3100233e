import { connect } from 'node:net';

/**
 * Whether anything accepts a TCP connection at a base URL's host and port, within `timeoutMs`. Nothing is sent
 * (no HTTP request, no TLS handshake, no key): the connection is closed as soon as it is open. Resolves with why it
 * could not connect (DNS, refused, timed out), or undefined when it could.
 */
export function probeConnect(baseUrl: string, timeoutMs: number): Promise<string | undefined> {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1'); // [::1] -> ::1
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (reason: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(
      () => done(`no connection to ${host}:${port} within ${timeoutMs} ms`),
      timeoutMs,
    );
    socket.once('connect', () => done(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done(`cannot connect to ${host}:${port} (${error.code ?? error.message})`),
    );
  });
}
