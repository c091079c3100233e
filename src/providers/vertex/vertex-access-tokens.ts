import type { AccessToken, TokenFetcher } from './vertex-credentials';

/**
 * A backend's current token, fetched once for all the requests that need it at the same moment, kept, and replaced
 * before it expires: a quarter of its life early, at most five minutes (an hour's token: at 55 minutes).
 */
export class AccessTokens {
  private current?: AccessToken & { fetchedAt: number };
  private pending?: Promise<AccessToken & { fetchedAt: number }>;
  /** The last few tokens handed out, for scrubbing vendor messages that quote one. */
  private readonly recent: string[] = [];

  constructor(
    private readonly fetcher: TokenFetcher,
    private readonly now: () => number = Date.now,
    /** Why no token can ever come (TokenSource.problem): the backend is unusable until its config is fixed. */
    readonly problem?: string,
  ) {}

  async token(): Promise<string> {
    if (this.current && !this.due(this.current)) return this.current.token;
    this.pending ??= this.fetcher
      .fetch()
      .then((fresh) => {
        this.current = { ...fresh, fetchedAt: this.now() };
        this.recent.unshift(fresh.token);
        this.recent.length = Math.min(this.recent.length, 4);
        return this.current;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return (await this.pending).token;
  }

  /** Vertex refused `token` (revoked, or expired early): the next request fetches a new one. */
  refused(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  /** Strings that must never reach a client. */
  secrets(): string[] {
    return [...this.recent];
  }

  private due(token: AccessToken & { fetchedAt: number }): boolean {
    const early = Math.min(5 * 60_000, Math.max(0, token.expiresAt - token.fetchedAt) / 4);
    return this.now() >= token.expiresAt - early;
  }
}
