/**
 * A liveness prober in a process of its own: GET <url> every 20 ms (one keep-alive connection), and on
 * `kill -USR2 <pid>` one line on stdout, `{"liveProbe": {"answers", "medianMs", "maxMs"}}`, for the answers since
 * the previous report, then a new period. Its own process so that what the test process does meanwhile (sending
 * and parsing big bodies in its stand-in upstreams) does not delay the probe: what it sees is the gateway's
 * answer time, plus the machine's scheduler.
 *
 * Usage: node live-probe.mjs <url>
 */
import http from 'node:http';

const url = new URL(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let latencies = [];
/** When the probe in flight was sent: one not answered yet counts in a report with how long it has waited. */
let inFlightSince;

function probe() {
  const started = performance.now();
  inFlightSince = started;
  const request = http.get(url, { agent }, (response) => {
    response.resume();
    response.on('end', () => {
      inFlightSince = undefined;
      latencies.push(performance.now() - started);
      setTimeout(probe, 20);
    });
  });
  request.on('error', () => {
    inFlightSince = undefined;
    setTimeout(probe, 20);
  });
}

process.on('SIGUSR2', () => {
  const waiting = inFlightSince === undefined ? [] : [performance.now() - inFlightSince];
  const sorted = [...latencies, ...waiting].sort((a, b) => a - b);
  const report = {
    answers: sorted.length,
    medianMs: sorted.length ? sorted[Math.floor(sorted.length / 2)] : null,
    maxMs: sorted.length ? sorted[sorted.length - 1] : null,
  };
  latencies = [];
  process.stdout.write(`${JSON.stringify({ liveProbe: report })}\n`);
});
process.stdout.write(`${JSON.stringify({ liveProbeReady: true })}\n`);
probe();
