// Preloaded into the gateway by bench/alloc.mjs (`node --require`), in three steps, one per SIGUSR2:
//   1st: starts V8's GC profiler (every collection of the main isolate, with each heap space's size before and after);
//   2nd: stops it, and starts V8's sampling heap profiler, counting every sampled allocation, also those a
//        scavenge or a full collection freed since (what a request allocates, not what it keeps);
//   3rd: stops it, writes {gc, allocations} to $ALLOC_PROFILE and prints {"allocProfile": path} on stdout.
// Two phases because sampling slows requests, and a slower request has more of itself promoted. Only the main
// thread profiles (a worker thread loads the preload too). A failure is printed as {"allocError": message}.
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { GCProfiler } = require('node:v8');
const { isMainThread } = require('node:worker_threads');

if (isMainThread) {
  const session = new Session();
  session.connect();
  const fail = (error) => console.log(JSON.stringify({ allocError: String(error?.message ?? error) }));
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  let step = 0;
  let gcProfiler;
  let gc;
  process.on('SIGUSR2', () => {
    step++;
    if (step === 1) {
      gcProfiler = new GCProfiler();
      gcProfiler.start();
    } else if (step === 2) {
      gc = gcProfiler.stop();
      post('HeapProfiler.enable')
        .then(() =>
          post('HeapProfiler.startSampling', {
            samplingInterval: 4096,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          }),
        )
        .catch(fail);
    } else if (step === 3) {
      post('HeapProfiler.stopSampling')
        .then(({ profile }) => {
          writeFileSync(process.env.ALLOC_PROFILE, JSON.stringify({ gc, allocations: profile }));
          console.log(JSON.stringify({ allocProfile: process.env.ALLOC_PROFILE }));
        })
        .catch(fail);
    }
  });
}
