/** `current` with `patch` merged in (RFC 7396 on a flat map): null removes a key, a null patch removes them all. */
export function mergePatch<T>(
  current: Record<string, T>,
  patch: Record<string, T | null> | null | undefined,
): Record<string, T> {
  if (patch === undefined) return current;
  if (patch === null) return {};
  const merged: Record<string, T> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue; // a DTO's declared but absent field
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
