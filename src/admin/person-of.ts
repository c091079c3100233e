import type { Request } from 'express';
import type { Person } from '../access/roles';
import { GatewayException } from '../core/errors/gateway.exception';

/**
 * The calling person, for what only a person can have (personal admin tokens, team tokens of their own); the
 * admin key (or a console session opened with it) is none: 403 permission_denied saying `what` belongs to a person.
 */
export function personOf(req: Request, what: string): Person {
  const person = req.adminActor?.person;
  if (!person)
    throw new GatewayException(
      'permission_denied',
      `${what} belong to a person: sign in to the console through SSO (or use your personal token); the admin key is nobody the identity provider knows.`,
    );
  return person;
}
