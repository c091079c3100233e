import { eventually } from './eventually';

/** What these helpers need of a gateway: its admin API (a TestGateway, or a process started by the tests). */
export interface AdminApi {
  admin(method: string, path: string): Promise<{ status: number; body: any }>;
}

/** A gateway running as a process of its own, at `url`: its admin API for these helpers. */
export function adminApiAt(url: string, adminKey: string): AdminApi {
  return {
    async admin(method: string, path: string) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminKey}` },
      });
      return { status: response.status, body: await response.json() };
    },
  };
}

export interface PollOptions {
  /** A failure's patience: the poll returns as soon as the records are there. */
  timeoutMs?: number;
  everyMs?: number;
}

/**
 * Waits until `team` has exactly `count` usage records and returns them, newest first. Usage is written after the
 * response closes, so a test polls for it; it asks for one record more than it expects, so a request recorded
 * twice shows as a failure instead of hiding behind the limit.
 */
export async function waitForUsageRecords(
  gw: AdminApi,
  team: string,
  count: number,
  { timeoutMs = 10_000, everyMs = 25 }: PollOptions = {},
): Promise<any[]> {
  return eventually(
    async () => {
      const { status, body } = await gw.admin(
        'GET',
        `/admin/v1/usage/records?team=${encodeURIComponent(team)}&limit=${Math.min(count + 1, 1000)}`,
      );
      expect(status).toBe(200);
      expect(body.data).toHaveLength(count);
      return body.data as any[];
    },
    timeoutMs,
    everyMs,
  );
}

/** The one usage record of `team` (it must have exactly one). */
export async function waitForUsageRecord(gw: AdminApi, team: string, options?: PollOptions): Promise<any> {
  const [record] = await waitForUsageRecords(gw, team, 1, options);
  return record;
}

/**
 * Waits until the usage summary `GET /admin/v1/usage?<query>` counts `requests` requests and returns the whole
 * answer (`total`, and `data` when grouped). Counters move once per record, so when the request count is reached
 * every other counter of those requests is there too: assert them on the result, once.
 */
export async function waitForUsageSummary(
  gw: AdminApi,
  query: string,
  requests: number,
  options: PollOptions = {},
): Promise<{ total: any; data: any[] }> {
  return summaryOf(() => gw.admin('GET', `/admin/v1/usage?${query}`), requests, options);
}

/** waitForUsageSummary as the team of `token` reads its own usage: `GET /v1/usage?<query>`. */
export async function waitForOwnUsageSummary(
  gw: { asTeam(token: string, method: string, path: string): Promise<{ status: number; body: any }> },
  token: string,
  query: string,
  requests: number,
  options: PollOptions = {},
): Promise<{ total: any; data: any[] }> {
  return summaryOf(() => gw.asTeam(token, 'GET', `/v1/usage?${query}`), requests, options);
}

async function summaryOf(
  read: () => Promise<{ status: number; body: any }>,
  requests: number,
  { timeoutMs = 10_000, everyMs = 25 }: PollOptions,
): Promise<{ total: any; data: any[] }> {
  return eventually(
    async () => {
      const { status, body } = await read();
      expect(status).toBe(200);
      expect(body.total?.requests).toBe(requests);
      return body;
    },
    timeoutMs,
    everyMs,
  );
}
