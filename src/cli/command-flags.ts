import { Command, Option } from 'commander';
import { cleanLimits, LIMIT_CATALOGUE, LIMIT_NAMES, type Limits } from '../core/limit-settings';
import { isMoneyLimit } from '../core/limit-catalogue';
import type { CeilingPatch } from '../teams/team-ceiling';
import type { LimitsPatch, MetadataPatch, TeamMcp } from '../teams/team.store';
import { positiveAmount, positiveInt } from './flag-values';

/**
 * One flag per limit, from the limit catalogue (`--rpm` requestsPerMinute, ...). With `removable` (updates), a
 * flag's value may also be `none`, which removes that limit.
 */
export const limitOptions = (command: Command, { removable = false } = {}) => {
  for (const name of LIMIT_NAMES) {
    const parse = isMoneyLimit(name) ? positiveAmount : positiveInt;
    const option = new Option(
      `${LIMIT_CATALOGUE[name].flag} <n>`,
      removable ? `${name} ("none" removes it)` : name,
    );
    // 'none' is kept as is (commander stores a parser's null as ''); limitFlags reads it as null.
    command.addOption(
      option.argParser(removable ? (value: string) => (value === 'none' ? value : parse(value)) : parse),
    );
  }
  return command;
};

/** What each limit flag was given (a number, or null for `none`), by limit name; flags not given are absent. */
function limitFlags(options: Record<string, unknown>): LimitsPatch {
  const given: LimitsPatch = {};
  for (const name of LIMIT_NAMES) {
    const value = options[new Option(`${LIMIT_CATALOGUE[name].flag} <n>`).attributeName()] as
      number | 'none' | undefined;
    if (value !== undefined) given[name] = value === 'none' ? null : value;
  }
  return given;
}

/** The limits the flags set, or undefined when none was given. */
export function limitsFrom(options: Record<string, unknown>): Limits | undefined {
  const limits = cleanLimits(limitFlags(options) as Limits);
  return Object.keys(limits).length ? limits : undefined;
}

/** The limit changes the flags name (null: removed), or undefined when none was given: nothing else changes. */
export function limitsPatchFrom(options: Record<string, unknown>): LimitsPatch | undefined {
  const patch = limitFlags(options);
  return Object.keys(patch).length ? patch : undefined;
}

/**
 * The ceiling the flags give (--ceiling-models, --ceiling-limit; in an update `none` drops a part, and
 * --remove-ceiling all of it), or undefined when none was given.
 */
export function ceilingFrom(options: Record<string, unknown>): CeilingPatch | null | undefined {
  if (options.removeCeiling) return null;
  const models = options.ceilingModels as string[] | undefined;
  const limits = options.ceilingLimit as LimitsPatch | undefined;
  if (!models && !limits) return undefined;
  return {
    ...(models ? { models: models.length === 1 && models[0] === 'none' ? null : models } : {}),
    ...(limits ? { limits } : {}),
  };
}

/** Labels set with --meta and removed with --unset-meta, or undefined when neither was given. */
export function metadataPatchFrom(
  set: Record<string, string> | undefined,
  unset: string[] | undefined,
): MetadataPatch | undefined {
  const both = (unset ?? []).filter((key) => set && key in set);
  if (both.length) throw new Error(`--meta and --unset-meta both name ${both.join(', ')}`);
  if (!set && !unset) return undefined;
  return { ...set, ...Object.fromEntries((unset ?? []).map((key) => [key, null])) };
}

/** The flags of a team's MCP permissions (docs/mcp.md), on `teams create` and `teams update`. */
export const mcpOptions = (command: Command) =>
  command
    .option(
      '--mcp-servers <list>',
      'the MCP servers it may reach: comma-separated ids ("none" for none)',
      list,
    )
    .option('--mcp-tools <list>', 'globs over <server>__<tool> (default *; needs --mcp-servers)', list);

/**
 * The team's MCP permissions the flags give (replaced whole, like the API's `mcp`), or undefined when neither flag
 * was given. --mcp-tools alone is refused: it would silently keep or drop the servers.
 */
export function mcpFrom(options: Record<string, unknown>): TeamMcp | undefined {
  const servers = options.mcpServers as string[] | undefined;
  const tools = options.mcpTools as string[] | undefined;
  if (!servers && !tools) return undefined;
  if (!servers) throw new Error('--mcp-tools needs --mcp-servers (the MCP permissions are replaced whole)');
  return { servers: servers.length === 1 && servers[0] === 'none' ? [] : servers, tools: tools ?? ['*'] };
}

/** A comma-separated list flag's items. */
export function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** One --meta key=value, added to the ones before. */
export function metadata(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at < 1) throw new Error(`--meta wants key=value, got "${value}"`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}
