/**
 * A counter of the event loop's turns, for tests of what runs in which turn: an immediate that asks for the next
 * turn's immediate bumps it once per turn until `stop()`.
 */
export function countTurns(): { readonly now: number; stop(): void } {
  let turn = 0;
  let counting = true;
  const count = () => {
    turn++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  return {
    get now() {
      return turn;
    },
    stop: () => void (counting = false),
  };
}
