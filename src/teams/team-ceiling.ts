import { GatewayException } from '../core/errors/gateway.exception';
import { cleanLimits, LIMIT_NAMES, type LimitName, type Limits } from '../core/limit-settings';
import { compileModelGlobs } from '../routing/model-glob';
import { mergePatch } from './merge-patch';

/**
 * A team's ceiling, set by an org-admin: the most a team-admin may give their team. Each part is optional:
 * `models` (names or `*` globs) bounds the team's models, `limits` bounds the limits it names (a limit the
 * ceiling has must be set on the team, at or below it; a limit it does not have is unbounded). A part the
 * ceiling leaves out, or no ceiling at all, makes the team's current value the bound for a team-admin
 * (admin/team-admin-changes.ts).
 *
 * The ceiling always holds: the team's models and limits are within it after every write (team.store.ts). A
 * value an org-admin names in the same write must be within it (else 400); values the write does not name are
 * brought within it (clampToCeiling), so lowering a ceiling lowers the team's values with it.
 */
export interface TeamCeiling {
  models?: string[];
  limits?: Limits;
}

/** An update of the ceiling: `models` replaced whole (null drops the bound), `limits` merged key by key. */
export interface CeilingPatch {
  models?: string[] | null;
  limits?: { [name in LimitName]?: number | null } | null;
}

/** The models not within `bound`: each must be matched by a bound glob, a glob tested as written. */
export function modelsOutside(bound: string[], models: string[]): string[] {
  const allowed = compileModelGlobs(bound);
  return models.filter((model) => !allowed(model));
}

/** One limit breaking a bound: left out (`value` undefined) or above it. */
export interface LimitOverBound {
  name: LimitName;
  value: number | undefined;
  bound: number;
}

/** The limits of `bound` that `limits` leaves out or sets above it (limits `bound` does not name are free). */
export function limitsOutside(bound: Limits, limits: Limits): LimitOverBound[] {
  return LIMIT_NAMES.flatMap((name) => {
    const ceiling = bound[name];
    const value = limits[name];
    if (ceiling === undefined || (value !== undefined && value <= ceiling)) return [];
    return [{ name, value, bound: ceiling }];
  });
}

/** The ceiling with `patch` applied; null when it bounds nothing. */
export function mergeCeiling(
  current: TeamCeiling | null,
  patch: CeilingPatch | null | undefined,
): TeamCeiling | null {
  if (patch === undefined) return current;
  if (patch === null) return null;
  const models = patch.models === undefined ? current?.models : (patch.models ?? undefined);
  const limits =
    patch.limits === undefined
      ? current?.limits
      : cleanLimits(
          mergePatch<number>(
            (current?.limits ?? {}) as Record<string, number>,
            patch.limits as Record<string, number | null> | null,
          ),
        );
  return ceilingOrNull({ models, limits });
}

/** `ceiling` without empty parts (an empty limits map bounds nothing), or null when nothing is left. */
export function ceilingOrNull(ceiling: TeamCeiling | null | undefined): TeamCeiling | null {
  const out: TeamCeiling = {};
  if (ceiling?.models) out.models = ceiling.models;
  const limits = cleanLimits(ceiling?.limits);
  if (Object.keys(limits).length > 0) out.limits = limits;
  return out.models || out.limits ? out : null;
}

/**
 * `models` and `limits` brought within `ceiling`. Models: each name or glob within the ceiling stays; one that is
 * not is replaced by the ceiling's entries it matches (so `gpt-*` under a ceiling of `gpt-6-*` becomes `gpt-6-*`,
 * and `*` becomes the ceiling's list): what is left is within both. Limits: each the ceiling has is lowered to it,
 * or set to it where the team had none.
 */
export function clampToCeiling(
  models: string[],
  limits: Limits,
  ceiling: TeamCeiling | null,
): { models: string[]; limits: Limits } {
  let clampedModels = models;
  if (ceiling?.models) {
    const bound = ceiling.models;
    const kept = models.flatMap((model) =>
      modelsOutside(bound, [model]).length === 0
        ? [model]
        : bound.filter((entry) => compileModelGlobs([model])(entry)),
    );
    clampedModels = [...new Set(kept)];
  }
  const clampedLimits: Limits = { ...limits };
  for (const { name, bound } of limitsOutside(ceiling?.limits ?? {}, limits)) clampedLimits[name] = bound;
  return { models: clampedModels, limits: cleanLimits(clampedLimits) };
}

/**
 * The models and limits an org-admin's write names (`named`: the team's resulting models if the write names them,
 * its resulting limits if it names any, and which) are within `ceiling`, else 400 naming the field. What a write
 * does not name is clamped instead (clampToCeiling).
 */
export function assertNamedWithinCeiling(
  id: string,
  ceiling: TeamCeiling | null,
  named: { models?: string[]; limits?: Limits; limitsNamed: 'all' | string[] },
): void {
  const refuse = (param: string, what: string): never => {
    throw new GatewayException(
      'invalid_request',
      `Team "${id}"'s ceiling does not allow ${what}; raise the ceiling (ceiling.${param}) in the same change, or give less.`,
      { param, wireCode: null },
    );
  };
  if (named.models && ceiling?.models) {
    const outside = modelsOutside(ceiling.models, named.models);
    if (outside.length > 0)
      refuse('models', `${outside.map((m) => `\`${m}\``).join(', ')} (within ${ceiling.models.join(', ')})`);
  }
  if (!named.limits) return;
  for (const { name, value, bound } of limitsOutside(ceiling?.limits ?? {}, named.limits)) {
    if (named.limitsNamed !== 'all' && !named.limitsNamed.includes(name)) continue; // not named: clamped
    refuse(
      `limits.${name}`,
      value === undefined ? `${name} removed (at most ${bound})` : `${name} ${value} (at most ${bound})`,
    );
  }
}
