import { useState } from 'preact/hooks';
import { api, daysAgo, formatCost, formatNumber, monthStart, utcDay, type Usage } from '../api';
import { DailyChart, daysBetween } from '../chart';
import { LIMIT_FIELDS, limitsOf, listOf } from '../limits-form';
import { useLoad } from '../use-load';
import { Tokens } from './tokens';

interface Team {
  id: string;
  models: string[];
  limits: Record<string, number>;
  metadata?: Record<string, string>;
  disabled?: boolean;
}
interface Budget {
  currency: string;
  budgets: Array<{ budget: string; limit: number; spent: number; used_ratio: number; resets_at: string }>;
}

/** One team: its settings, its tokens, its usage and spend by day and model, and how full its limits are. */
export function TeamPage({ team: id }: { team: string }) {
  const path = `/admin/v1/teams/${encodeURIComponent(id)}`;
  const team = useLoad(() => api<Team>('GET', path), [id]);
  const today = utcDay();
  const usage = useLoad(
    () =>
      Promise.all([
        api<Usage>('GET', `/admin/v1/usage?team=${encodeURIComponent(id)}&from=${[monthStart(), daysAgo(29)].sort()[0]}&to=${today}&groupBy=day`),
        api<Usage>('GET', `/admin/v1/usage?team=${encodeURIComponent(id)}&from=${daysAgo(29)}&to=${today}&groupBy=model`),
        api<Budget>('GET', `${path}/budget`),
      ]),
    [id, today],
  );
  const [deleted, setDeleted] = useState(false);
  if (deleted) return <p role="status">Team {id} deleted. <a href="#/teams">Back to teams</a></p>;
  if (team.error) return <p class="error">{team.error}</p>;
  if (!team.data) return <p class="loading">Loading…</p>;
  const t = team.data;

  const act = async (method: string, suffix: string) => {
    await api(method, `${path}${suffix}`).catch((e: Error) => alert(e.message));
    team.reload();
  };
  const remove = async () => {
    if (!confirm(`Delete team ${id} and revoke its tokens?`)) return;
    await api('DELETE', `${path}?force=true`).then(() => setDeleted(true), (e: Error) => alert(e.message));
  };

  return (
    <section>
      <p>
        <a href="#/teams">Teams</a> /
      </p>
      <h1>
        {t.id} {t.disabled ? <span class="badge off">disabled</span> : <span class="badge on">active</span>}
      </h1>
      <div class="actions">
        {t.disabled ? (
          <button type="button" onClick={() => act('POST', '/enable')}>
            Enable
          </button>
        ) : (
          <button type="button" onClick={() => act('POST', '/disable')}>
            Disable
          </button>
        )}
        <button type="button" class="danger" onClick={remove}>
          Delete team
        </button>
      </div>
      {Object.keys(t.metadata ?? {}).length > 0 && (
        <dl class="metadata" data-testid="metadata">
          {Object.entries(t.metadata!).map(([key, value]) => (
            <>
              <dt>{key}</dt>
              <dd>{value}</dd>
            </>
          ))}
        </dl>
      )}
      {usage.data && <TeamUsage usage={usage.data} limits={t.limits} />}
      {usage.error && <p class="error">{usage.error}</p>}
      <Tokens team={id} />
      <EditTeam team={t} onSaved={() => team.reload()} />
    </section>
  );
}

function TeamUsage({ usage: [byDay, byModel, budget], limits }: { usage: [Usage, Usage, Budget]; limits: Record<string, number> }) {
  const today = utcDay();
  const days = daysBetween(daysAgo(29), today);
  const at = (day: string) => byDay.data.find((r) => r.day === day);
  const tokensToday = at(today)?.total_tokens ?? 0;
  const tokensMonth = byDay.data.filter((r) => r.day! >= monthStart()).reduce((n, r) => n + r.total_tokens, 0);
  const fullness = [
    ...(limits.tokensPerDay ? [{ name: 'tokensPerDay', used: tokensToday, limit: limits.tokensPerDay, label: `${formatNumber(tokensToday)} of ${formatNumber(limits.tokensPerDay)} tokens` }] : []),
    ...(limits.tokensPerMonth ? [{ name: 'tokensPerMonth', used: tokensMonth, limit: limits.tokensPerMonth, label: `${formatNumber(tokensMonth)} of ${formatNumber(limits.tokensPerMonth)} tokens` }] : []),
    ...budget.budgets.map((b) => ({ name: b.budget, used: b.spent, limit: b.limit, label: `${b.spent.toFixed(4)} of ${b.limit} ${budget.currency}` })),
  ];
  return (
    <>
      <h2>Usage</h2>
      <DailyChart title="Tokens per day" days={days} series={[{ label: 'tokens', values: days.map((d) => at(d)?.total_tokens ?? 0), color: '#059669' }]} />
      <DailyChart title="Requests per day" days={days} series={[{ label: 'requests', values: days.map((d) => at(d)?.requests ?? 0), color: '#2563eb' }]} />
      <DailyChart title={`Spend per day (${byDay.currency})`} days={days} series={[{ label: 'spend', values: days.map((d) => (at(d)?.cost_nanos ?? 0) / 1e9), color: '#d97706' }]} />
      <h3>By model, last 30 days</h3>
      <table data-testid="usage-by-model">
        <thead>
          <tr>
            <th>Model</th>
            <th>Requests</th>
            <th>Tokens</th>
            <th>Spend</th>
          </tr>
        </thead>
        <tbody>
          {byModel.data.map((r) => (
            <tr key={r.model}>
              <td>{r.model}</td>
              <td class="num">{formatNumber(r.requests)}</td>
              <td class="num">{formatNumber(r.total_tokens)}</td>
              <td class="num">{formatCost(r.cost_nanos, byModel.currency, r.cost_unknown_requests, r.requests)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Limits</h3>
      {Object.keys(limits).length === 0 && <p class="muted">No limits.</p>}
      <ul class="limits">
        {fullness.map((f) => (
          <li key={f.name}>
            <span>{f.name}</span>
            <div class="bar">
              <div class={f.used / f.limit >= 0.9 ? 'hot' : ''} style={{ width: `${Math.min(100, (f.used / f.limit) * 100)}%` }} />
            </div>
            <span class="muted">{f.label}</span>
          </li>
        ))}
        {Object.entries(limits)
          .filter(([name]) => !fullness.some((f) => f.name === name))
          .map(([name, value]) => (
            <li key={name}>
              <span>{name}</span> <span class="muted">{value} (per-minute and concurrency windows are not kept as history)</span>
            </li>
          ))}
      </ul>
    </>
  );
}

function EditTeam({ team, onSaved }: { team: Team; onSaved: () => void }) {
  const [message, setMessage] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const fields = new FormData(event.currentTarget as HTMLFormElement);
    let metadata: Record<string, string> | undefined;
    try {
      metadata = JSON.parse(String(fields.get('metadata') || '{}'));
      await api('PATCH', `/admin/v1/teams/${encodeURIComponent(team.id)}`, { models: listOf(fields.get('models')) ?? ['*'], limits: limitsOf(fields), metadata });
      setMessage('Saved.');
      onSaved();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  return (
    <details class="create">
      <summary>Edit models, limits and metadata</summary>
      <form onSubmit={submit}>
        <label>
          Models (comma-separated) <input name="models" defaultValue={team.models.join(', ')} />
        </label>
        {LIMIT_FIELDS.map(([key, label]) => (
          <label key={key}>
            {label} <input name={key} type="number" min="0" step="any" defaultValue={team.limits?.[key] === undefined ? '' : String(team.limits[key])} />
          </label>
        ))}
        <label>
          Metadata (JSON object of strings) <textarea name="metadata" defaultValue={JSON.stringify(team.metadata ?? {}, null, 1)} />
        </label>
        <button type="submit">Save</button>
      </form>
      {message && <p role="status">{message}</p>}
    </details>
  );
}
