import type { ServerResponse } from 'node:http';
import { KeepAlives } from '../../src/streaming/keep-alives';

/** A response that records what is written to it. */
function fakeResponse(): ServerResponse & { written: string[] } {
  const written: string[] = [];
  return {
    written,
    writableEnded: false,
    write(text: string) {
      written.push(text);
      return true;
    },
  } as unknown as ServerResponse & { written: string[] };
}

describe('keep-alive comments from one timer for every open stream', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('comments on each silent stream every period, and not on one that wrote within it', () => {
    const keepAlives = new KeepAlives(100);
    const [silent, busy] = [fakeResponse(), fakeResponse()];
    keepAlives.watch(silent);
    const busyWatch = keepAlives.watch(busy);
    for (let i = 0; i < 3; i++) {
      jest.advanceTimersByTime(50);
      busyWatch.wrote();
      jest.advanceTimersByTime(50);
    }
    expect(silent.written).toEqual([': keep-alive\n\n', ': keep-alive\n\n', ': keep-alive\n\n']);
    expect(busy.written).toEqual([]);
    expect(jest.getTimerCount()).toBe(1);
  });

  it('stops commenting on a stopped or ended stream, and runs no timer while no stream is open', () => {
    const keepAlives = new KeepAlives(100);
    const [stopped, ended] = [fakeResponse(), fakeResponse()];
    const watch = keepAlives.watch(stopped);
    keepAlives.watch(ended);
    (ended as { writableEnded: boolean }).writableEnded = true;
    watch.stop();
    jest.advanceTimersByTime(300);
    expect([stopped.written, ended.written]).toEqual([[], []]);
    expect(keepAlives.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('does nothing when keep-alives are off', () => {
    const keepAlives = new KeepAlives(0);
    const res = fakeResponse();
    keepAlives.watch(res);
    jest.advanceTimersByTime(60_000);
    expect(res.written).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });
});
