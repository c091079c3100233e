import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  /** One per day; null is a day whose value is unknown (a spend with no price): no point, "unknown" in the legend. */
  values: Array<number | null>;
  color: string;
}

/** Axis steps for counts: whole numbers only (no "0.25 requests"). */
const WHOLE_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7,
  5e7, 1e8, 1e9, 1e10, 1e11, 1e12,
];

/**
 * A time-series chart (uPlot) of one value per UTC day, as wide as its box (it follows the window). Counts step in
 * whole numbers; with `format` (money) the axis and legend write values with it. The value axis starts at 0, and
 * a series of zeros is drawn against 0 to 1 (uPlot's default for it, 0 to 100, read as if there were some).
 */
export function DailyChart({
  days,
  series,
  title,
  format,
}: {
  days: string[];
  series: Series[];
  title: string;
  format?: (value: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const data: uPlot.AlignedData = [
      days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000),
      ...series.map((s) => s.values),
    ];
    const chart = new uPlot(
      {
        title,
        width: innerWidth(element),
        height: 220,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            fill: `${s.color}22`,
            width: 2,
            ...(format
              ? { value: (_u: uPlot, v: number | null) => (v === null ? 'unknown' : format(v)) }
              : {}),
          })),
        ],
        axes: [
          {},
          format
            ? { size: 80, values: (_u: uPlot, splits: number[]) => splits.map(format) }
            : { size: 80, incrs: WHOLE_STEPS },
        ],
      },
      data,
      element,
    );
    const resized = new ResizeObserver(() => {
      const width = innerWidth(element);
      if (width !== chart.width) chart.setSize({ width, height: 220 });
    });
    resized.observe(element);
    return () => {
      resized.disconnect();
      chart.destroy();
    };
  }, [days.join(), JSON.stringify(series), title]);
  return <div class="chart" ref={box} data-chart={title} />;
}

/** The box's width inside its padding: what the chart may fill without spilling over the box's edge. */
function innerWidth(element: HTMLElement): number {
  const style = getComputedStyle(element);
  return Math.max(
    320,
    Math.floor(element.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)) || 640,
  );
}

/** Every UTC day from `from` to `to`, inclusive. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}
