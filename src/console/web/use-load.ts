import { useEffect, useState } from 'preact/hooks';

/** Loads once per change of `deps`; `reload` loads again (after a change). */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data?: T; error?: string; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data }),
      (e: Error) => live && setState({ error: e.message }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}
