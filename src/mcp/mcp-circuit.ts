/** How long a failing MCP server is skipped: `initialMs` after its first failure, doubling up to `maxMs`. */
export interface McpBackoff {
  initialMs: number;
  maxMs: number;
}

/** The one probe's ticket: only the request holding it may end the probe (mcp-circuit.ts). */
export class McpProbeTicket {
  /** Tells a ticket from the admissions 'yes' and 'no' (and keeps the class from matching any object). */
  readonly kind = 'probe';
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
  /** The probe in flight, if any: only its own outcome clears it, so a second probe is never let in. */
  private probe: McpProbeTicket | undefined;

  constructor(
    private readonly backoff: McpBackoff,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether a request may go to the server now. A ticket: it may, as the one probe (it must end in succeeded(),
   * failed(ticket) or released(ticket)).
   */
  admit(): 'yes' | 'no' | McpProbeTicket {
    if (this.failures === 0) return 'yes';
    if (this.probe || this.now() < this.openUntil) return 'no';
    this.probe = new McpProbeTicket();
    return this.probe;
  }

  /** The server answered: whoever asked, it is up. */
  succeeded(): void {
    this.failures = 0;
    this.openUntil = 0;
    this.probe = undefined;
  }

  /**
   * The server failed a request (`ticket`: the probe's). A request sent before the circuit opened that fails while
   * it is open adds nothing. Only the probe's own failure ends the probe: another request's leaves it in flight.
   */
  failed(ticket?: McpProbeTicket): void {
    if (ticket && ticket === this.probe) this.probe = undefined;
    const now = this.now();
    if (now < this.openUntil) return;
    this.failures++;
    this.openUntil =
      now + Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.min(this.failures - 1, 30));
  }

  /** A probe that ended without a verdict (its caller went away): the next request may probe. Others' tickets: nothing. */
  released(ticket: McpProbeTicket): void {
    if (ticket === this.probe) this.probe = undefined;
  }

  /** Until when (epoch ms) the server is skipped; null when it is not. */
  get retryAt(): number | null {
    return this.failures === 0 ? null : this.openUntil;
  }
}
