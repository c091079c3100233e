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
 * not block the loop and are not counted. With threadCpuUsage the user-mode part is reported apart
 * (`maxUserMs`, the round with the most of it): the gateway's own code. The rest of a round's CPU is the kernel's,
 * nearly all of it page faults backing memory the round touched for the first time (a 15 MB copy is ~3,800
 * faults, 2 us each in this CI's container and up to ~12 us when both cores are busy); `minorFaults` counts the
 * process's faults during the round with the most CPU. Without threadCpuUsage, user = all CPU (a stricter bound).
 *
 * `kill -USR2 <pid>` writes one line to stderr, `{"eventLoopProbe": {"maxCpuMs", "maxUserMs", "maxWallMs", "ticks",
 * "longest": {"userMs", "systemMs", "minorFaults"}}}`, for the time since the previous report (or the start), and
 * starts a new period.
 */
import { readFileSync } from 'node:fs';

const schedstat = `/proc/self/task/${process.pid}/schedstat`;
/** The main thread's CPU time so far, in nanoseconds: all of it, and the user-mode part. */
const cpuNs =
  typeof process.threadCpuUsage === 'function'
    ? () => {
        const usage = process.threadCpuUsage();
        return { all: (usage.user + usage.system) * 1000, user: usage.user * 1000 };
      }
    : () => {
        const all = Number(readFileSync(schedstat, 'utf8').split(' ')[0]);
        return { all, user: all };
      };
const minorFaults = () => process.resourceUsage().minorPageFault;

let lastCpu = cpuNs();
let lastFaults = minorFaults();
let lastWall = process.hrtime.bigint();
let maxCpuNs = 0;
let maxUserNs = 0;
let longest = { userMs: 0, systemMs: 0, minorFaults: 0 };
let maxWallNs = 0n;
let ticks = 0;

const timer = setInterval(() => {
  const cpu = cpuNs();
  const faults = minorFaults();
  const wall = process.hrtime.bigint();
  const all = cpu.all - lastCpu.all;
  const user = cpu.user - lastCpu.user;
  if (all > maxCpuNs) {
    maxCpuNs = all;
    longest = { userMs: user / 1e6, systemMs: (all - user) / 1e6, minorFaults: faults - lastFaults };
  }
  if (user > maxUserNs) maxUserNs = user;
  if (wall - lastWall > maxWallNs) maxWallNs = wall - lastWall;
  lastCpu = cpu;
  lastFaults = faults;
  lastWall = wall;
  ticks++;
}, 1);
timer.unref();

process.on('SIGUSR2', () => {
  process.stderr.write(
    `${JSON.stringify({
      eventLoopProbe: {
        maxCpuMs: maxCpuNs / 1e6,
        maxUserMs: maxUserNs / 1e6,
        maxWallMs: Number(maxWallNs) / 1e6,
        ticks,
        longest,
      },
    })}\n`,
  );
  maxCpuNs = 0;
  maxUserNs = 0;
  longest = { userMs: 0, systemMs: 0, minorFaults: 0 };
  maxWallNs = 0n;
  ticks = 0;
  lastCpu = cpuNs();
  lastFaults = minorFaults();
  lastWall = process.hrtime.bigint();
});
