import {
  GROWTH_ROOM_BYTES,
  HEAP_GROWING_PERCENT,
  HeapGrowthPolicy,
  LARGE_BODY_BYTES,
  MIN_GROWING_PERCENT,
  growingPercentFor,
} from '../../src/lifecycle/heap-growth';
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
    growth.noteLive(GROWTH_ROOM_BYTES * 10);
    expect(flags).toEqual([]);
  });

  it('gives a large heap a bounded room past its live size instead of doubling it', () => {
    const MB = 1024 * 1024;
    expect(growingPercentFor(35 * MB)).toBe(HEAP_GROWING_PERCENT); // ordinary traffic: 2x, as before
    expect(growingPercentFor(GROWTH_ROOM_BYTES)).toBe(HEAP_GROWING_PERCENT);
    expect(growingPercentFor(128 * MB)).toBe(50); // 64 MB of room
    expect(growingPercentFor(200 * MB)).toBe(30); // 32 % rounded down to a step of 10
    expect(growingPercentFor(350 * MB)).toBe(MIN_GROWING_PERCENT); // 18 %: never below the floor
    expect(growingPercentFor(4096 * MB)).toBe(MIN_GROWING_PERCENT);
  });

  it('sets the growth after full collections only when it changes, and keeps V8 in charge while large bodies pass', () => {
    const MB = 1024 * 1024;
    const { flags, growth } = policy(60_000);
    growth.apply([]);
    growth.noteLive(40 * MB);
    expect(flags).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]); // unchanged: no flag set
    growth.noteLive(350 * MB);
    growth.noteLive(360 * MB);
    expect(flags).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, '--heap-growing-percent=20']);
    growth.noteBody(LARGE_BODY_BYTES);
    growth.noteLive(128 * MB); // remembered, not applied while V8 chooses
    expect(flags.at(-1)).toBe('--heap-growing-percent=0');
    expect(flags).toHaveLength(3);
  });

  it('restores the growth for the live size seen, not 2x, when a large-body spell ends', async () => {
    const MB = 1024 * 1024;
    const { flags, growth } = policy(100);
    growth.apply([]);
    growth.noteLive(128 * MB);
    growth.noteBody(LARGE_BODY_BYTES);
    await eventually(() => expect(flags.at(-1)).toBe('--heap-growing-percent=50'), 5000);
    expect(flags).toEqual([
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
      '--heap-growing-percent=50',
      '--heap-growing-percent=0',
      '--heap-growing-percent=50',
    ]);
  });
});
