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
