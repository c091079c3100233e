import { formatRole, parseRole, type Person, type Role } from '../../access/roles';
import type { OidcConfig } from '../../config/config.schema';

/** The ID token's claims this sign-in reads. */
export type IdTokenClaims = Record<string, unknown> & { sub: string };

/**
 * The person as the ID token names them. An email the provider says it has not verified is left out: the session
 * and the audit trail would otherwise name someone by an address they only typed.
 */
export function personOf(claims: IdTokenClaims): Person {
  const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  const email = claims.email_verified === false ? undefined : text(claims.email);
  return {
    subject: claims.sub,
    ...(email ? { email } : {}),
    ...(text(claims.name) ? { name: text(claims.name) } : {}),
  };
}

/** The groups in the configured claim: a list of strings, or one string (some providers send one group so). */
export function groupsOf(claims: IdTokenClaims, groupsClaim: string): string[] {
  const value = claims[groupsClaim];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((group): group is string => typeof group === 'string') : [];
}

/** The roles auth.oidc.groupRoles gives the person's groups, each once (the loader checked every value). */
export function rolesOf(claims: IdTokenClaims, oidc: OidcConfig): Role[] {
  const roles = new Map<string, Role>();
  for (const group of groupsOf(claims, oidc.groupsClaim)) {
    const text = Object.hasOwn(oidc.groupRoles, group) ? oidc.groupRoles[group] : undefined;
    const role = text === undefined ? undefined : parseRole(text);
    if (role) roles.set(formatRole(role), role);
  }
  return [...roles.values()];
}

/**
 * Why a sign-in gave no role, for the gateway's log (group names and ids are no secret). A claim the ID token does not
 * carry at all (no mapper, scope or token configuration at the provider puts it there) reads differently from groups
 * that are there but not mapped (Keycloak's full paths, Entra's object ids): what the operator must fix differs.
 */
export function noRoleReason(claims: IdTokenClaims, oidc: OidcConfig): string {
  const claim = oidc.groupsClaim;
  const start = `no role for ${claims.sub}: `;
  if (!Object.hasOwn(claims, claim))
    return `${start}the ID token has no "${claim}" claim (the provider must put the groups there: docs/sso.md, What each provider needs)`;
  const groups = groupsOf(claims, claim);
  if (groups.length === 0) return `${start}the ID token's "${claim}" claim lists no group`;
  const shown = groups.slice(0, 20).map((group) => JSON.stringify(group.slice(0, 100)));
  const more = groups.length > shown.length ? ` and ${groups.length - shown.length} more` : '';
  return `${start}no group in auth.oidc.groupRoles among the ID token's "${claim}": ${shown.join(', ')}${more}`;
}
