import { LimitsService, type Reservation } from '../../src/limits/limits.service';

/**
 * Settlement: the keys and deltas the usage script applies to turn what a request reserved at admission into what
 * it really used and cost. Expected deltas are the differences worked out by hand.
 */
describe('LimitsService.settlement', () => {
  // settlement() touches no dependency: the service is built without Redis.
  const limits = new LimitsService(
    undefined as never,
    undefined as never,
    undefined as never,
    undefined as never,
    undefined as never,
  );
  const reservation: Reservation = {
    teamId: 't',
    keys: ['tpm', 'tpd'],
    reserved: 1000,
    costKeys: ['budget'],
    costReserved: 50_000,
  };

  it('moves every token counter by used - reserved and every budget by cost - reserved cost', () => {
    expect(limits.settlement(reservation, 240, 12_000)).toEqual({
      keys: ['tpm', 'tpd', 'budget'],
      deltas: [-760, -760, -38_000],
    });
  });

  it('adds when the request used more than it reserved (no max_tokens, a long answer)', () => {
    expect(limits.settlement(reservation, 1500, 80_000)).toEqual({
      keys: ['tpm', 'tpd', 'budget'],
      deltas: [500, 500, 30_000],
    });
  });

  it('a cost unknown at the end keeps what was reserved on the budget (delta 0), tokens still settle', () => {
    expect(limits.settlement(reservation, 1000)).toEqual({
      keys: ['tpm', 'tpd', 'budget'],
      deltas: [0, 0, 0],
    });
    expect(limits.settlement(reservation, 10, null)).toEqual({
      keys: ['tpm', 'tpd', 'budget'],
      deltas: [-990, -990, 0],
    });
  });

  it('a cost of 0 is a real cost (a free model), not an unknown one', () => {
    expect(limits.settlement(reservation, 1000, 0).deltas).toEqual([0, 0, -50_000]);
  });

  it('nothing reserved: nothing to settle', () => {
    expect(limits.settlement(undefined, 500, 100)).toEqual({ keys: [], deltas: [] });
    expect(
      limits.settlement({ teamId: 't', keys: [], reserved: 0, costKeys: ['b'], costReserved: 10 }, 5, 4),
    ).toEqual({ keys: ['b'], deltas: [-6] });
  });
});
