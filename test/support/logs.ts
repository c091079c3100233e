import { eventually } from './eventually';

type LogLine = Record<string, unknown>;

/**
 * Waits for the gateway's access-log line that matches `fields` (the newest) and returns it. The line is written
 * when the response has finished, which a client can see before the gateway's 'finish' handler has run.
 */
export async function waitForAccessLine(
  gw: { logs: LogLine[] },
  fields: LogLine,
  timeoutMs = 3000,
): Promise<LogLine> {
  return eventually(() => {
    const line = gw.logs
      .filter((l) => l.type === 'access' && Object.entries(fields).every(([key, value]) => l[key] === value))
      .pop();
    expect(line).toBeDefined();
    return line!;
  }, timeoutMs);
}
