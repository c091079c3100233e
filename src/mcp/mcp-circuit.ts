/** How long a failing MCP server is skipped: `initialMs` after its first failure, doubling up to `maxMs`. */
export interface McpBackoff {
  initialMs: number;
  maxMs: number;
}

/**
 * Whether requests go to one MCP server (docs/mcp.md, when a server is down): after it fails (it could not be
 * connected to, its transport failed, or a list got no answer within its timeoutMs; a call that timed out is only
 * that call's failure: upstream-failures.ts) it is skipped for a back-off, `initialMs` doubling with each failure up
 * to `maxMs`, so a dead server does not cost every list its timeout. When the back-off is over, the first request is
 * let through as a probe, one at a time (the others are still refused); its success closes the circuit, its failure
 * opens it again for twice as long. `now` is injectable for tests.
 */
export class McpCircuit {
  private failures = 0;
  private openUntil = 0;
  private probing = false;

  constructor(
    private readonly backoff: McpBackoff,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether a request may go to the server now. 'probe': it may, as the one probe (it must end in succeeded(),
   * failed() or released()).
   */
  admit(): 'yes' | 'probe' | 'no' {
    if (this.failures === 0) return 'yes';
    if (this.probing || this.now() < this.openUntil) return 'no';
    this.probing = true;
    return 'probe';
  }

  succeeded(): void {
    this.failures = 0;
    this.openUntil = 0;
    this.probing = false;
  }

  /** The server failed a request. A request sent before the circuit opened that fails while it is open adds nothing. */
  failed(): void {
    this.probing = false;
    const now = this.now();
    if (now < this.openUntil) return;
    this.failures++;
    this.openUntil =
      now + Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.min(this.failures - 1, 30));
  }

  /** A probe that ended without a verdict (its caller went away): the next request may probe. */
  released(): void {
    this.probing = false;
  }

  /** Until when (epoch ms) the server is skipped; null when it is not. */
  get retryAt(): number | null {
    return this.failures === 0 ? null : this.openUntil;
  }
}
