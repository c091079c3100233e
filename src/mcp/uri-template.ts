/**
 * Whether `uri` could be an expansion of the RFC 6570 URI template `template`: its literal parts in order, the first
 * at the start and the last at the end, anything where an expression (`{name}`, `{+path}`, `{?query}`) stands. A
 * plain scan (each literal found after the one before), so a client's long URI costs linear time, not a regex's
 * backtracking.
 */
export function templateMatches(template: string, uri: string): boolean {
  const literals = template.split(/\{[^}]*\}/);
  if (literals.length === 1) return template === uri;
  const first = literals[0];
  const last = literals[literals.length - 1];
  if (uri.length < first.length + last.length || !uri.startsWith(first) || !uri.endsWith(last)) return false;
  const end = uri.length - last.length;
  let at = first.length;
  for (const literal of literals.slice(1, -1)) {
    const found = uri.indexOf(literal, at);
    if (found < 0 || found + literal.length > end) return false;
    at = found + literal.length;
  }
  return true;
}
