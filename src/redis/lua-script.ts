import { createHash } from 'node:crypto';
import type Redis from 'ioredis';

/**
 * One Lua script, owned by the repository that builds its KEYS and ARGV (its text and its argument layout sit in the
 * same file). Every key a script touches is passed in KEYS with one team's hash tag, so it is Cluster-safe.
 *
 * On one server (or a Sentinel's master) the script is a `defineCommand` command: ioredis runs it by EVALSHA and
 * falls back to EVAL after a Redis restart. The repository defines it on its connection when it is constructed
 * (`defineOn`), before any command is sent: an auto-pipeline already open when a command is defined lacks it, and
 * a script sent into one never settles. On a Cluster it is a plain
 * EVALSHA call: ioredis auto-pipelines a command by the node owning its first key, and it finds EVALSHA's keys (after
 * the key count) but not a defineCommand script's: it takes the script's first argument, so a script went into
 * another node's pipeline, where it never settled (ioredis issues #536, #2109). As EVALSHA each script is pipelined
 * with the other commands for its node. A node that does not have the script (a replica just promoted, a restarted
 * server) answers NOSCRIPT: the call is repeated as EVAL, which also loads it there.
 */
export class LuaScript<Reply> {
  private readonly sha: string;

  constructor(
    /** The command name on a connection (`redis.<name>(...)`); unique among scripts. */
    readonly name: string,
    readonly lua: string,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Makes the script a command of this connection (a Cluster needs nothing: it runs EVALSHA). */
  defineOn(redis: Redis): void {
    if (!redis.isCluster) redis.defineCommand(this.name, { lua: this.lua });
  }

  run(redis: Redis, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<Reply> {
    const keysThenArgs = [keys.length, ...keys, ...args];
    if (redis.isCluster) {
      return (redis.call('EVALSHA', this.sha, ...keysThenArgs) as Promise<Reply>).catch((error: Error) => {
        if (!error.message.startsWith('NOSCRIPT')) throw error;
        return redis.call('EVAL', this.lua, ...keysThenArgs) as Promise<Reply>;
      });
    }
    const command = (redis as unknown as Record<string, (...a: Array<string | number>) => Promise<Reply>>)[
      this.name
    ];
    if (typeof command !== 'function')
      throw new Error(`Lua script ${this.name} is not defined on this connection`);
    return command.apply(redis, keysThenArgs);
  }
}
