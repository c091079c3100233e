// Preloaded into the gateway by bench/alloc.mjs (`node --require`): V8's sampling heap profiler, counting every
// sampled allocation, also those a scavenge or a full collection freed since (what a request allocates, not what
// it keeps). The first SIGUSR2 starts sampling, the second writes the profile to $ALLOC_PROFILE and prints
// {"allocProfile": path} on stdout. Only the main thread samples (a worker thread loads the preload too).
const { Session } = require('node:inspector');
const { writeFileSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

if (isMainThread) {
  const session = new Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true;
      session.post('HeapProfiler.enable', () =>
        session.post('HeapProfiler.startSampling', {
          samplingInterval: 4096,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        }),
      );
      return;
    }
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error) throw new Error(error.message);
      writeFileSync(process.env.ALLOC_PROFILE, JSON.stringify(result.profile));
      console.log(JSON.stringify({ allocProfile: process.env.ALLOC_PROFILE }));
    });
  });
}
