/**
 * The prompt-cache counts a stand-in reports for a model named `...cached-<reads>-<writes5m>-<writes1h>...`
 * (`claude-cached-900-50-30`, `gpt-cached-800-0-0`, `anthropic.claude-cached-...`), each in its vendor's own members
 * (the stand-ins' files say which); undefined for any other model, which keeps its stand-in's usual counts.
 */
export interface CacheCounts {
  reads: number;
  writes5m: number;
  writes1h: number;
}

export function cacheCountsOf(model: unknown): CacheCounts | undefined {
  const match = /cached-(\d+)-(\d+)-(\d+)/.exec(typeof model === 'string' ? model : '');
  return match
    ? { reads: Number(match[1]), writes5m: Number(match[2]), writes1h: Number(match[3]) }
    : undefined;
}
