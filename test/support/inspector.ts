import { WebSocket } from 'undici';

/** The DevTools URL a process started with --inspect=127.0.0.1:0 printed ("Debugger listening on ws://..."). */
export function inspectorUrl(output: string): string {
  const match = /Debugger listening on (ws:\/\/\S+)/.exec(output);
  if (!match) throw new Error(`no inspector URL in:\n${output.slice(0, 2000)}`);
  return match[1];
}

/**
 * Forces a full garbage collection in another Node process through its inspector, then reads its JS heap:
 * what is still reachable, so a leak shows and a lazy collector does not.
 */
export async function heapUsedAfterGc(url: string): Promise<number> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve());
    socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${url}`)));
  });
  let nextId = 1;
  const call = (method: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = nextId++;
      const onMessage = (event: { data: unknown }) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, unknown> };
        if (message.id !== id) return;
        socket.removeEventListener('message', onMessage);
        resolve(message.result ?? {});
      };
      socket.addEventListener('message', onMessage);
      socket.send(JSON.stringify({ id, method }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    return Number((await call('Runtime.getHeapUsage')).usedSize);
  } finally {
    socket.close();
  }
}
