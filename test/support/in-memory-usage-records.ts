import { counterIncrements } from '../../src/usage/usage-record';
import type {
  EstimateCount,
  RecordToWrite,
  Stored,
  UsageRecords,
} from '../../src/usage/usage-records.repository';

/**
 * The UsageRecords repository in memory, with the store's contract (the Lua script's, tested against a real Redis
 * in test/e2e/redis-scripts.e2e.spec.ts and usage-estimate-replacement.e2e.spec.ts): a record is written once per
 * id, a retry answers what the first write did, a real record replaces an estimate. A test can script each answer
 * (`answer`, an Error for a failed write), take the store away (`writable = false`, then `becomeWritable()`) and
 * script the replicas' acknowledgements.
 */
export class InMemoryUsageRecords implements UsageRecords {
  writable = true;
  /** Every record sent, in order (a retried one again). */
  readonly sent: RecordToWrite[] = [];
  /** What each record id was stored as, and whether as an estimate. */
  readonly stored = new Map<
    string,
    {
      as: Stored;
      estimate: boolean;
      metrics: 'pending' | 'counted';
      day: string;
      increments: Array<[string, number]>;
    }
  >();
  /** Team -> day -> counter field -> value. */
  readonly counters = new Map<string, Map<string, Record<string, number>>>();
  /** Overrides what the store answers for a record (an Error: the write failed). */
  answer?: (write: RecordToWrite) => Stored | Error | undefined;
  readonly waits: Array<[number, number]> = [];
  waitAnswer: () => Promise<boolean> = async () => true;
  roles = 0;
  replicasConnected = 1;
  private readonly listeners: Array<() => void> = [];

  onWritable(listener: () => void): void {
    this.listeners.push(listener);
  }

  becomeWritable(): void {
    this.writable = true;
    for (const listener of this.listeners) listener();
  }

  async write(records: RecordToWrite[]): Promise<Array<Stored | Error>> {
    return records.map((write) => {
      this.sent.push(write);
      return this.answer?.(write) ?? this.store(write);
    });
  }

  async replicated(replicas: number, timeoutMs: number): Promise<boolean> {
    this.waits.push([replicas, timeoutMs]);
    return this.waitAnswer();
  }

  async aMasterHasNoReplica(): Promise<boolean> {
    this.roles++;
    return this.replicasConnected === 0;
  }

  async countEstimate(_team: string, recordId: string): Promise<EstimateCount> {
    const stored = this.stored.get(recordId);
    if (!stored) return 'missing';
    if (!stored.estimate || stored.metrics === 'counted') return 'skip';
    stored.metrics = 'counted';
    return 'count';
  }

  async dayCounters(teams: string[], days: string[]): Promise<Array<Array<Record<string, string>>>> {
    return teams.map((team) =>
      days.map((day) =>
        Object.fromEntries(
          Object.entries(this.counters.get(team)?.get(day) ?? {}).map(([field, value]) => [
            field,
            String(value),
          ]),
        ),
      ),
    );
  }

  async records(): Promise<Array<[string, string[]]>> {
    return [];
  }

  /** What the Lua script does with one record (its day counters; not the stream or the limit counters). */
  private store({ record, estimate }: RecordToWrite): Stored {
    const before = this.stored.get(record.id);
    if (before && !before.estimate) return estimate ? 'duplicate' : before.as;
    if (before && estimate) return 'duplicate';
    if (before) this.add(record.team, before.day, before.increments, -1); // the estimate goes
    const as: Stored = !before
      ? 'written'
      : before.metrics === 'pending'
        ? 'replaced-estimate'
        : 'replaced-counted-estimate';
    const day = record.at.slice(0, 10);
    const increments = counterIncrements(record);
    this.add(record.team, day, increments, 1);
    this.stored.set(record.id, { as, estimate, metrics: 'pending', day, increments });
    return as;
  }

  private add(team: string, day: string, increments: Array<[string, number]>, sign: 1 | -1): void {
    const teamDays = this.counters.get(team) ?? new Map<string, Record<string, number>>();
    this.counters.set(team, teamDays);
    const fields = teamDays.get(day) ?? {};
    teamDays.set(day, fields);
    for (const [field, amount] of increments) fields[field] = (fields[field] ?? 0) + sign * amount;
  }
}
