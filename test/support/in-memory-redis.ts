import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';

/**
 * Just enough of an ioredis connection for unit tests of code that reads hashes and publishes: hashes in a Map,
 * a `status` the test sets ('ready', or anything else for an outage), every command counted, and an optional
 * hold on reads (`holdReads`) so a test can interleave an event between a read being sent and its answer.
 */
export class InMemoryRedis extends EventEmitter {
  status = 'ready';
  readonly hashes = new Map<string, Record<string, string>>();
  readonly published: Array<[string, string]> = [];
  readonly commands: string[] = [];
  private held?: { release: Promise<void> };

  /** Reads sent from now on answer (with what was stored when they were sent) only once `release` is called. */
  holdReads(): () => void {
    let release!: () => void;
    this.held = { release: new Promise<void>((resolve) => (release = resolve)) };
    return () => {
      this.held = undefined;
      release();
    };
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    this.commands.push(`hgetall ${key}`);
    if (this.status !== 'ready') throw new Error(`connection is ${this.status}`);
    const snapshot = { ...(this.hashes.get(key) ?? {}) };
    if (this.held) await this.held.release;
    return snapshot;
  }

  /** Lua scripts are commands of the connection (redis/lua-script.ts); the ones below stand in for theirs. */
  defineCommand(): void {}

  /** The token repository's HSET_IF_EXISTS script (one key, then field/value pairs). */
  async hsetIfExists(_numberOfKeys: number, key: string, ...fieldValues: string[]): Promise<number> {
    this.commands.push(`hsetIfExists ${key}`);
    const hash = this.hashes.get(key);
    if (!hash) return 0;
    for (let i = 0; i < fieldValues.length; i += 2) hash[fieldValues[i]] = fieldValues[i + 1];
    return 1;
  }

  async publish(channel: string, message: string): Promise<number> {
    this.published.push([channel, message]);
    return 0;
  }

  async subscribe(channel: string): Promise<number> {
    this.commands.push(`subscribe ${channel}`);
    return 1;
  }

  asRedis(): Redis {
    return this as unknown as Redis;
  }
}
