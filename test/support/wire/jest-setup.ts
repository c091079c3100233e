import { liveRecorders } from './wire-recorder';

/**
 * After each test, the wire violations its exchanges produced (test/support/wire/wire-recorder.ts) fail that
 * test, named with what was wrong and where.
 */
afterEach(async () => {
  for (const recorder of liveRecorders()) await recorder.settled();
  const violations = liveRecorders().flatMap((recorder) => recorder.takeViolations());
  if (violations.length)
    throw new Error(
      `The gateway's answers do not match the vendors' published shapes:\n${violations.join('\n')}`,
    );
});
