/**
 * How full something is against its own maximum (a quota, a budget): a bar, announced to assistive technology
 * (and to the tests) as a meter with its label, value and maximum. At 90 % and more it turns red.
 */
export function Meter({ label, value, max }: { label: string; value: number; max: number }) {
  const ratio = max > 0 ? value / max : 0;
  return (
    <div
      class="bar"
      role="meter"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={max}
      aria-valuenow={value}
      title={`${Math.round(ratio * 100)} %`}
    >
      <div class={ratio >= 0.9 ? 'hot' : ''} style={{ width: `${Math.min(100, ratio * 100)}%` }} />
    </div>
  );
}
