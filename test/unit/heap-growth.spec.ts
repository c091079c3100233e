import { HEAP_GROWING_PERCENT, HeapGrowthPolicy, LARGE_BODY_BYTES } from '../../src/lifecycle/heap-growth';
import { eventually } from '../support/eventually';

describe('heap growth policy', () => {
  const policy = (relaxForMs = 60_000) => {
    const flags: string[] = [];
    return { flags, growth: new HeapGrowthPolicy((set) => flags.push(set), relaxForMs) };
  };

  it('holds the old generation to 2x at startup, unless the command line set its own growth', () => {
    const ours = policy();
    ours.growth.apply([]);
    expect(ours.flags).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    const operators = policy();
    operators.growth.apply(['--heap-growing-percent=300']);
    operators.growth.noteBody(LARGE_BODY_BYTES * 10);
    expect(operators.flags).toEqual([]); // their choice stands, large bodies or not
  });

  it('hands the growth back to V8 while large bodies pass, once, and takes it back when they stop', async () => {
    const { flags, growth } = policy(500);
    growth.apply([]);
    growth.noteBody(LARGE_BODY_BYTES - 1);
    expect(flags).toHaveLength(1); // small bodies change nothing
    growth.noteBody(LARGE_BODY_BYTES);
    growth.noteBody(LARGE_BODY_BYTES * 4);
    expect(flags).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, '--heap-growing-percent=0']);
    // Large bodies keep arriving: the relaxed state lasts past its first deadline.
    const keepArriving = setInterval(() => growth.noteBody(LARGE_BODY_BYTES), 20);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    clearInterval(keepArriving);
    expect(flags).toHaveLength(2);
    await eventually(
      () =>
        expect(flags).toEqual([
          `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
          '--heap-growing-percent=0',
          `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
        ]),
      5000,
    );
    growth.noteBody(LARGE_BODY_BYTES);
    expect(flags.at(-1)).toBe('--heap-growing-percent=0'); // and again on the next large body
  });

  it('does nothing in a process where it was never applied (tests, embedders)', () => {
    const { flags, growth } = policy();
    growth.noteBody(LARGE_BODY_BYTES * 10);
    expect(flags).toEqual([]);
  });
});
