import { allowedCpus, parseCpuList, placementFor } from '../../src/providers/local/cpu-placement';

describe('local inference CPU placement', () => {
  it('parses the kernel cpu list format', () => {
    expect(parseCpuList('0-3,8,10-11\n')).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(parseCpuList('5')).toEqual([5]);
  });

  it('defaults to every allowed CPU but the first, and pins the worker to those', () => {
    expect(placementFor({ threads: 0, pinCpus: true }, [0, 1])).toEqual({ threads: 1, cpus: [1] });
    expect(placementFor({ threads: 0, pinCpus: true }, [2, 3, 4, 5])).toEqual({
      threads: 3,
      cpus: [3, 4, 5],
    });
  });

  it('pins only when the gateway keeps a CPU of its own, and not when pinning is off', () => {
    expect(placementFor({ threads: 0, pinCpus: true }, [0])).toEqual({ threads: 1 });
    expect(placementFor({ threads: 2, pinCpus: true }, [0, 1])).toEqual({ threads: 2 });
    expect(placementFor({ threads: 2, pinCpus: true }, [0, 1, 2, 3])).toEqual({ threads: 2, cpus: [2, 3] });
    expect(placementFor({ threads: 0, pinCpus: false }, [0, 1, 2, 3])).toEqual({ threads: 3 });
  });

  it('reads the CPUs this process may use', () => {
    const cpus = allowedCpus();
    expect(cpus.length).toBeGreaterThan(0);
    expect(new Set(cpus).size).toBe(cpus.length);
  });
});
