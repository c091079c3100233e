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
