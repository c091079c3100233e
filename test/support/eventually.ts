/** Retries an assertion until it passes or the time is up (usage is written after the response closes). */
export async function eventually<T>(
  assertion: () => Promise<T> | T,
  timeoutMs = 3000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }
}

/**
 * Waits until the wall clock is past `instant` (epoch ms): an expiry or a grace period's end that the gateway
 * reported. For behaviour that depends on time itself there is no state to poll but the clock.
 */
export async function untilPast(instant: number): Promise<void> {
  for (let left = instant - Date.now(); left >= 0; left = instant - Date.now())
    await new Promise((resolve) => setTimeout(resolve, Math.min(left + 1, 50)));
}
