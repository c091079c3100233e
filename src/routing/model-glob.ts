/**
 * Team model lists are names or globs where `*` matches any run of characters
 * (including '/', which model names often contain: `meta-llama/*`).
 */
export function compileModelGlobs(globs: readonly string[]): (model: string) => boolean {
  if (globs.includes('*')) return () => true;
  const exact = new Set(globs.filter((g) => !g.includes('*')));
  const patterns = globs
    .filter((g) => g.includes('*'))
    .map((g) => new RegExp(`^${g.split('*').map(escapeRegExp).join('.*')}$`));
  return (model) => exact.has(model) || patterns.some((p) => p.test(model));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
