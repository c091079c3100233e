import { api, daysAgo, monthStart, utcDay, type Usage, type UsageRow } from '../api';
import { DailyChart, daysBetween } from '../chart';
import { formatCost, formatMoney, formatNumber, spendOf } from '../format';
import { useLoad } from '../use-load';

/** Requests, tokens and spend today and this month, error rate, top teams and models, and 30 days of charts. */
export function OverviewPage() {
  const today = utcDay();
  const from = [monthStart(), daysAgo(29)].sort()[0];
  const { data, error } = useLoad(
    () =>
      Promise.all([
        api<Usage>('GET', `/admin/v1/usage?from=${from}&to=${today}&groupBy=day`),
        api<Usage>('GET', `/admin/v1/usage?from=${monthStart()}&to=${today}&groupBy=model`),
      ]),
    [today],
  );
  if (error) return <p class="error">{error}</p>;
  if (!data) return <p class="loading">Loading…</p>;
  const [byDay, byModel] = data;
  const sum = (rows: UsageRow[]) =>
    rows.reduce(
      (t, r) => ({
        requests: t.requests + r.requests,
        errors: t.errors + r.requests_error,
        tokens: t.tokens + r.total_tokens,
        cost: t.cost + (r.cost_nanos ?? 0),
        unpriced: t.unpriced + r.cost_unknown_requests,
      }),
      { requests: 0, errors: 0, tokens: 0, cost: 0, unpriced: 0 },
    );
  const month = sum(byDay.data.filter((r) => r.day! >= monthStart()));
  const todays = sum(byDay.data.filter((r) => r.day === today));
  const days = daysBetween(daysAgo(29), today);
  const perDay = (pick: (r: UsageRow) => number) =>
    days.map((day) => byDay.data.filter((r) => r.day === day).reduce((n, r) => n + pick(r), 0));
  const top = (rows: UsageRow[], key: (r: UsageRow) => string) =>
    [
      ...rows.reduce(
        (m, r) => m.set(key(r), (m.get(key(r)) ?? 0) + r.total_tokens),
        new Map<string, number>(),
      ),
    ]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5);
  const card = (label: string, value: string, testId: string, note?: string) => (
    <div class="card" data-testid={testId}>
      <span>{label}</span>
      <strong>{value}</strong>
      {note && <small>{note}</small>}
    </div>
  );
  // Spend, and apart from it the requests it leaves out because their model has no price.
  const spend = (label: string, t: { cost: number; unpriced: number; requests: number }, testId: string) =>
    t.requests > 0 && t.unpriced === t.requests
      ? card(label, 'unpriced', testId, `${formatNumber(t.unpriced)} requests without a price`)
      : card(
          label,
          formatCost(t.cost, byDay.currency),
          testId,
          t.unpriced > 0 ? `+ ${formatNumber(t.unpriced)} unpriced requests` : undefined,
        );
  return (
    <section>
      <h1>Overview</h1>
      <div class="cards">
        {card('Requests today', formatNumber(todays.requests), 'requests-today')}
        {card('Tokens today', formatNumber(todays.tokens), 'tokens-today')}
        {spend('Spend today', todays, 'spend-today')}
        {card('Requests this month', formatNumber(month.requests), 'requests-month')}
        {card('Tokens this month', formatNumber(month.tokens), 'tokens-month')}
        {spend('Spend this month', month, 'spend-month')}
        {card(
          'Error rate this month',
          month.requests ? `${((month.errors / month.requests) * 100).toFixed(2)} %` : '-',
          'error-rate',
        )}
      </div>
      <DailyChart
        title="Requests per day"
        days={days}
        series={[
          { label: 'requests', values: perDay((r) => r.requests), color: '#2563eb' },
          { label: 'errors', values: perDay((r) => r.requests_error), color: '#dc2626' },
        ]}
      />
      <DailyChart
        title="Tokens per day"
        days={days}
        series={[{ label: 'tokens', values: perDay((r) => r.total_tokens), color: '#059669' }]}
      />
      <DailyChart
        title={`Spend per day (${byDay.currency})`}
        days={days}
        format={(amount) => formatMoney(amount, byDay.currency)}
        series={[
          {
            label: 'spend',
            values: days.map((day) => spendOf(byDay.data.filter((r) => r.day === day))),
            color: '#d97706',
          },
        ]}
      />
      <div class="columns">
        <TopList
          title="Top teams this month (tokens)"
          rows={top(
            byDay.data.filter((r) => r.day! >= monthStart()),
            (r) => r.team,
          )}
          href={(team) => `#/teams/${encodeURIComponent(team)}`}
        />
        <TopList title="Top models this month (tokens)" rows={top(byModel.data, (r) => r.model ?? '?')} />
      </div>
    </section>
  );
}

function TopList({
  title,
  rows,
  href,
}: {
  title: string;
  rows: Array<[string, number]>;
  href?: (name: string) => string;
}) {
  return (
    <div>
      <h2>{title}</h2>
      {rows.length === 0 ? (
        <p class="muted">No usage yet.</p>
      ) : (
        <table>
          <tbody>
            {rows.map(([name, tokens]) => (
              <tr key={name}>
                <td>{href ? <a href={href(name)}>{name}</a> : name}</td>
                <td class="num">{formatNumber(tokens)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
