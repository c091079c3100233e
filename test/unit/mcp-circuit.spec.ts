import { McpCircuit, McpProbeTicket } from '../../src/mcp/mcp-circuit';

describe('the circuit of an MCP server', () => {
  let now: number;
  let circuit: McpCircuit;
  beforeEach(() => {
    now = 1_000_000;
    circuit = new McpCircuit({ initialMs: 5000, maxMs: 60_000 }, () => now);
  });

  it('lets requests through until a failure, then none for a back-off that doubles up to its cap', () => {
    expect(circuit.admit()).toBe('yes');
    expect(circuit.retryAt).toBeNull();
    const backoffs: number[] = [];
    circuit.failed();
    for (let i = 0; i < 6; i++) {
      backoffs.push(circuit.retryAt! - now);
      now += 1;
      expect(circuit.admit()).toBe('no');
      now = circuit.retryAt!;
      const probe = circuit.admit() as McpProbeTicket;
      expect(probe).toBeInstanceOf(McpProbeTicket);
      circuit.failed(probe);
    }
    expect(backoffs).toEqual([5000, 10_000, 20_000, 40_000, 60_000, 60_000]);
  });

  it('one probe at a time; its success closes the circuit at once', () => {
    circuit.failed();
    now = circuit.retryAt!;
    expect(circuit.admit()).toBeInstanceOf(McpProbeTicket);
    expect(circuit.admit()).toBe('no');
    circuit.succeeded();
    expect(circuit.admit()).toBe('yes');
    expect(circuit.retryAt).toBeNull();
    circuit.failed();
    expect(circuit.retryAt! - now).toBe(5000);
  });

  it('a probe whose caller left lets the next request probe; a late failure of an earlier request adds nothing', () => {
    circuit.failed();
    circuit.failed();
    expect(circuit.retryAt! - now).toBe(5000);
    now = circuit.retryAt!;
    const ticket = circuit.admit() as McpProbeTicket;
    expect(ticket).toBeInstanceOf(McpProbeTicket);
    circuit.released(ticket);
    expect(circuit.admit()).toBeInstanceOf(McpProbeTicket);
  });

  it("only the probe's own outcome ends it: another request's failure or release lets no second probe in", () => {
    circuit.failed();
    now = circuit.retryAt!;
    const probe = circuit.admit() as McpProbeTicket;
    expect(probe).toBeInstanceOf(McpProbeTicket);
    // A request admitted before the circuit opened fails now (no ticket), and a stale ticket is released.
    circuit.failed();
    now = circuit.retryAt!;
    circuit.released(new McpProbeTicket());
    expect(circuit.admit()).toBe('no');
    // The probe's own failure ends it: after the back-off, the next request probes.
    circuit.failed(probe);
    now = circuit.retryAt!;
    const next = circuit.admit() as McpProbeTicket;
    expect(next).toBeInstanceOf(McpProbeTicket);
    circuit.released(probe);
    expect(circuit.admit()).toBe('no');
    circuit.released(next);
    expect(circuit.admit()).toBeInstanceOf(McpProbeTicket);
  });
});
