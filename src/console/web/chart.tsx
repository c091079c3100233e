import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

/** A time-series chart (uPlot) of one value per UTC day. */
export function DailyChart({ days, series, title }: { days: string[]; series: Series[]; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const width = Math.max(320, box.current.clientWidth || 640);
    const data: uPlot.AlignedData = [days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000), ...series.map((s) => s.values)];
    const chart = new uPlot(
      {
        title,
        width,
        height: 220,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, fill: `${s.color}22`, width: 2 }))],
        axes: [{}, { size: 70 }],
      },
      data,
      box.current,
    );
    return () => chart.destroy();
  }, [days.join(), JSON.stringify(series), title]);
  return <div class="chart" ref={box} data-chart={title} />;
}

/** Every UTC day from `from` to `to`, inclusive. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}
