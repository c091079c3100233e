/**
 * Loaded into a gateway process (`node --import`) by the event-loop tests: how long the longest synchronous run on
 * the main thread took, in CPU time, so the answer does not depend on how busy the machine is.
 *
 * A timer ticks every millisecond. Between two ticks the event loop ran at most one round of callbacks (a timer
 * that is due runs at the start of the next round), so the main thread's CPU time spent between two ticks bounds
 * the longest run that kept the loop from answering anything else. CPU time and not wall-clock time: on a loaded
 * machine (CI, other suites in parallel) the process is also descheduled for tens of milliseconds at a time,
 * which a wall-clock delay (a health probe's latency, `monitorEventLoopDelay`) counts as blocking although the
 * gateway was doing nothing. The wall-clock maximum is reported beside it, for information.
 *
 * The main thread's CPU time: `process.threadCpuUsage()` where Node has it (23.9+), else the thread's
 * `/proc/self/task/<pid>/schedstat` (nanoseconds on CPU, Linux). Other threads (V8's concurrent GC, workers) do
 * not block the loop and are not counted.
 *
 * `kill -USR2 <pid>` writes one line to stderr, `{"eventLoopProbe": {"maxCpuMs", "maxWallMs", "ticks"}}`, for the
 * time since the previous report (or the start), and starts a new period.
 */
import { readFileSync } from 'node:fs';

const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const cpuNs =
  typeof process.threadCpuUsage === 'function'
    ? () => {
        const usage = process.threadCpuUsage();
        return (usage.user + usage.system) * 1000;
      }
    : () => Number(readFileSync(schedstat, 'utf8').split(' ')[0]);

let lastCpu = cpuNs();
let lastWall = process.hrtime.bigint();
let maxCpuNs = 0;
let maxWallNs = 0n;
let ticks = 0;

const timer = setInterval(() => {
  const cpu = cpuNs();
  const wall = process.hrtime.bigint();
  if (cpu - lastCpu > maxCpuNs) maxCpuNs = cpu - lastCpu;
  if (wall - lastWall > maxWallNs) maxWallNs = wall - lastWall;
  lastCpu = cpu;
  lastWall = wall;
  ticks++;
}, 1);
timer.unref();

process.on('SIGUSR2', () => {
  process.stderr.write(
    `${JSON.stringify({ eventLoopProbe: { maxCpuMs: maxCpuNs / 1e6, maxWallMs: Number(maxWallNs) / 1e6, ticks } })}\n`,
  );
  maxCpuNs = 0;
  maxWallNs = 0n;
  ticks = 0;
  lastCpu = cpuNs();
  lastWall = process.hrtime.bigint();
});
