import { McpCircuit } from '../../src/mcp/mcp-circuit';

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
      expect(circuit.admit()).toBe('probe');
      circuit.failed();
    }
    expect(backoffs).toEqual([5000, 10_000, 20_000, 40_000, 60_000, 60_000]);
  });

  it('one probe at a time; its success closes the circuit at once', () => {
    circuit.failed();
    now = circuit.retryAt!;
    expect(circuit.admit()).toBe('probe');
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
    expect(circuit.admit()).toBe('probe');
    circuit.released();
    expect(circuit.admit()).toBe('probe');
  });
});
