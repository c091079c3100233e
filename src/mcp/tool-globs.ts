import { SEPARATOR } from './mcp-tool-names';

/** Longest glob taken: a server id (32) and the separator, then a tool name as long as MCP's advice allows (128). */
export const MAX_TOOL_GLOB_LENGTH = 162;

/** How many globs a team's (or a token's) list may hold. */
export const MAX_TOOL_GLOBS = 100;

/**
 * What is wrong with one glob over tools' gateway names (`<server>__<tool>`), or undefined: it must be 1 to
 * MAX_TOOL_GLOB_LENGTH characters with no whitespace, control character or comma (no tool name has one; a comma or
 * a space is a list typed as one glob, `github__*, notes__*`, which would match nothing).
 */
export function toolGlobSyntaxProblem(glob: string): string | undefined {
  if (glob.length === 0) return 'is empty';
  if (glob.length > MAX_TOOL_GLOB_LENGTH) return `is longer than ${MAX_TOOL_GLOB_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\s,\u0000-\u001f\u007f]/.test(glob)) return 'has whitespace, a comma or a control character';
  return undefined;
}

/**
 * The globs of a team's `mcp.tools` that can match no tool of its `servers`, each with why: a glob without `*` or
 * `__` (an unprefixed tool name, `echo` for `remote__echo`), or one whose server part (before its first `__`, when
 * it has no `*`) is not one of the team's servers (a typo, or a server not given). A server id holds no `__`, so
 * the part before the first `__` of a gateway name is always its server.
 */
export function toolGlobsMatchingNothing(
  servers: readonly string[],
  tools: readonly string[],
): Array<{ glob: string; why: string }> {
  const problems: Array<{ glob: string; why: string }> = [];
  for (const glob of tools) {
    const at = glob.indexOf(SEPARATOR);
    if (at < 0) {
      if (!glob.includes('*'))
        problems.push({ glob, why: `tools are named <server>${SEPARATOR}<tool>, so it names none` });
      continue;
    }
    const server = glob.slice(0, at);
    if (!server.includes('*') && !servers.includes(server))
      problems.push({ glob, why: `"${server}" is not one of the team's MCP servers` });
  }
  return problems;
}
