import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import type { RedisConfig } from '../config/config.schema';

/**
 * Redis replicates asynchronously: a usage batch a master acknowledged can still be lost if that master dies before
 * its replica has it, and the promoted replica then has no trace of it. So the usage writer calls this after each
 * batch: WAIT on every master it may have written to (on a Cluster, all of them; WAIT with nothing written returns at
 * once) until `replicas` replicas hold everything this connection wrote.
 *
 * - resolves `true` when every master was acknowledged, `false` when one timed out (no replica up: the batch stays
 *   written, since retrying cannot help, and the caller counts it);
 * - rejects when a master could not be asked (it died): the caller retries the batch, which is idempotent (each
 *   record's marker), so a record the new master lacks is written again and one it has is not counted twice.
 */
export async function waitForReplicas(redis: Redis, replicas: number, timeoutMs: number): Promise<boolean> {
  const acknowledged = await Promise.all(mastersOf(redis).map((master) => master.wait(replicas, timeoutMs)));
  return acknowledged.every((count) => count >= replicas);
}

/**
 * True when a master has no replica connected at all (ROLE), e.g. right after a failover promoted its only one:
 * waiting for an acknowledgement there can only time out. A replica that is connected but slow is not this case.
 */
export async function aMasterHasNoReplica(redis: Redis): Promise<boolean> {
  const roles = (await Promise.all(mastersOf(redis).map((master) => master.call('ROLE')))) as Array<
    [string, number, unknown[]]
  >;
  return roles.some(
    ([role, , replicas]) => role === 'master' && Array.isArray(replicas) && replicas.length === 0,
  );
}

function mastersOf(redis: Redis): Redis[] {
  return redis.isCluster ? (redis as unknown as Cluster).nodes('master') : [redis];
}

/** `redis.usageReplicaAcks`, or by default 1 on a Cluster or Sentinel (they have replicas) and 0 on one server. */
export function usageReplicaAcks(settings: RedisConfig): number {
  return settings.usageReplicaAcks ?? (settings.cluster || settings.sentinel ? 1 : 0);
}
