import type { Request } from 'express';
import type { Actor } from '../audit/audit.log';

/**
 * The audit trail's actor of an admin call, from the actor the auth guard resolved: the person (subject and
 * email) whenever one is known; the name `console:<name>` for a console session, `admin-api[:<label>]` for the
 * admin key (a shared key: the label is what X-Switchyard-Actor said, and the caller's address is recorded).
 */
export function auditActorOf(req: Request): Actor {
  const actor = req.adminActor;
  const where = { ip: req.ip, requestId: req.exchange.requestId };
  const person = actor?.person
    ? { subject: actor.person.subject, ...(actor.person.email ? { email: actor.person.email } : {}) }
    : undefined;
  const name =
    actor?.via === 'console'
      ? `console:${actor.label ?? actor.person?.email ?? actor.person?.subject ?? ''}`
      : actor?.via === 'personal-token'
        ? `personal-token:${actor.person?.email ?? actor.person?.subject ?? ''}`
        : actor?.label
          ? `admin-api:${actor.label}`
          : 'admin-api';
  return { actor: name, ...(person ? { person } : {}), ...where };
}
