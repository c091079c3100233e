import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import { pageEnd } from '../redis/stream-page';

/**
 * Who made an admin change: `admin-api[:<label>]` (with the caller's address), `console:<name>` or
 * `cli:<user>@<host>`; and the person (their identity provider's subject and email) when a person made it.
 */
export interface Actor {
  actor: string;
  person?: { subject: string; email?: string };
  ip?: string;
  requestId?: string;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  person: { subject: string; email: string | null } | null;
  ip: string | null;
  requestId: string | null;
  action: string;
  target: string;
  details: Record<string, unknown>;
}

/** The audit trail never grows without bound; the newest entries are what an operator reads. */
const MAX_ENTRIES = 100_000;

/** Every admin change, appended to one Redis Stream (`audit`). */
@Injectable()
export class AuditLog {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async write(
    by: Actor,
    action: string,
    target: string,
    details: Record<string, unknown> = {},
  ): Promise<void> {
    await this.redis.xadd(
      this.keys.audit(),
      'MAXLEN',
      '~',
      MAX_ENTRIES,
      '*',
      'at',
      new Date().toISOString(),
      'actor',
      by.actor,
      'person',
      by.person ? JSON.stringify({ subject: by.person.subject, email: by.person.email ?? null }) : '',
      'ip',
      by.ip ?? '',
      'requestId',
      by.requestId ?? '',
      'action',
      action,
      'target',
      target,
      'details',
      JSON.stringify(details),
    );
  }

  /** Newest first; `before` is an entry id to page from. */
  async read(filter: {
    limit: number;
    before?: string;
    action?: string;
    target?: string;
    /** Only entries about these teams (target `team/<id>` or under it): what a team-admin may read. */
    teams?: readonly string[];
  }): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    const first = pageEnd(filter.before || undefined);
    if (first === null) return out;
    let end = first;
    // Filters are applied while paging so `limit` counts matching entries.
    while (out.length < filter.limit) {
      const batch = await this.redis.xrevrange(this.keys.audit(), end, '-', 'COUNT', 500);
      if (batch.length === 0) break;
      for (const [id, flat] of batch) {
        const entry = toEntry(id, flat);
        if (filter.action && entry.action !== filter.action) continue;
        if (filter.target && !isUnder(entry.target, filter.target)) continue;
        if (filter.teams && !filter.teams.some((team) => isUnder(entry.target, `team/${team}`))) continue;
        out.push(entry);
        if (out.length === filter.limit) break;
      }
      end = `(${batch[batch.length - 1][0]}`;
    }
    return out;
  }
}

/** `team/a` is under `team/a`, and so is `team/a/token/x`; `team/ab` is not. */
function isUnder(target: string, root: string): boolean {
  return target === root || target.startsWith(`${root}/`);
}

function toEntry(id: string, flat: string[]): AuditEntry {
  const fields: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  return {
    id,
    at: fields.at,
    actor: fields.actor,
    person: fields.person ? (JSON.parse(fields.person) as AuditEntry['person']) : null,
    ip: fields.ip || null,
    requestId: fields.requestId || null,
    action: fields.action,
    target: fields.target,
    details: JSON.parse(fields.details || '{}') as Record<string, unknown>,
  };
}
