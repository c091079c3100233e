import { useState } from 'preact/hooks';
import { api, formatNumber, utcDay } from '../api';
import { LIMIT_FIELDS, limitsOf, listOf } from '../limits-form';
import { useLoad } from '../use-load';

const PAGE = 50;

interface Team {
  id: string;
  models: string[];
  limits: Record<string, number>;
  disabled?: boolean;
}
interface TeamPage {
  data: Team[];
  has_more: boolean;
}

/** Teams, a page at a time (the admin API pages by id), with a search, today's tokens and a create form. */
export function TeamsPage() {
  const [search, setSearch] = useState('');
  const [pages, setPages] = useState<string[]>(['']); // the `after` of each page seen, for Previous
  const after = pages[pages.length - 1];
  const teams = useLoad(() => api<TeamPage>('GET', `/admin/v1/teams?limit=${PAGE}&search=${encodeURIComponent(search)}${after ? `&after=${encodeURIComponent(after)}` : ''}`), [search, after]);
  const today = utcDay();
  const usage = useLoad(() => api<{ data: Array<{ team: string; total_tokens: number }> }>('GET', `/admin/v1/usage?from=${today}&to=${today}&groupBy=day`), [today]);
  const tokensToday = new Map((usage.data?.data ?? []).map((r) => [r.team, r.total_tokens]));
  // Budget bars for the page's teams that have a budget (one call each, only for those).
  const budgeted = (teams.data?.data ?? []).filter((t) => t.limits?.budgetPerDay !== undefined || t.limits?.budgetPerMonth !== undefined).map((t) => t.id);
  const budgets = useLoad(
    () => Promise.all(budgeted.map((id) => api<{ team: string; budgets: Array<{ budget: string; used_ratio: number }> }>('GET', `/admin/v1/teams/${encodeURIComponent(id)}/budget`))),
    [budgeted.join()],
  );
  const budgetUse = new Map((budgets.data ?? []).map((b) => [b.team, Math.max(0, ...b.budgets.map((x) => x.used_ratio))]));
  const most = Math.max(1, ...tokensToday.values());

  return (
    <section>
      <h1>Teams</h1>
      <CreateTeam onCreated={() => teams.reload()} />
      <input class="search" type="search" placeholder="Search team ids" value={search} onInput={(e) => (setSearch((e.target as HTMLInputElement).value), setPages(['']))} aria-label="Search teams" />
      {teams.error && <p class="error">{teams.error}</p>}
      <table class="teams">
        <thead>
          <tr>
            <th>Team</th>
            <th>Status</th>
            <th>Models</th>
            <th>Limits</th>
            <th>Tokens today</th>
            <th>Budget used</th>
          </tr>
        </thead>
        <tbody>
          {(teams.data?.data ?? []).map((team) => (
            <tr key={team.id}>
              <td>
                <a href={`#/teams/${encodeURIComponent(team.id)}`}>{team.id}</a>
              </td>
              <td>{team.disabled ? <span class="badge off">disabled</span> : <span class="badge on">active</span>}</td>
              <td>{team.models.join(', ')}</td>
              <td class="muted">{Object.entries(team.limits ?? {}).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}</td>
              <td>
                <div class="bar" title={formatNumber(tokensToday.get(team.id) ?? 0)}>
                  <div style={{ width: `${((tokensToday.get(team.id) ?? 0) / most) * 100}%` }} />
                </div>
                <span class="num">{formatNumber(tokensToday.get(team.id) ?? 0)}</span>
              </td>
              <td>
                {budgetUse.has(team.id) ? (
                  <>
                    <div class="bar">
                      <div class={budgetUse.get(team.id)! >= 0.9 ? 'hot' : ''} style={{ width: `${Math.min(100, budgetUse.get(team.id)! * 100)}%` }} />
                    </div>
                    <span class="num" data-testid={`budget-${team.id}`}>{(budgetUse.get(team.id)! * 100).toFixed(0)} %</span>
                  </>
                ) : (
                  <span class="muted">no budget</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="pager">
        <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          Previous
        </button>
        <button type="button" disabled={!teams.data?.has_more} onClick={() => setPages([...pages, teams.data!.data[teams.data!.data.length - 1].id])}>
          Next
        </button>
      </div>
    </section>
  );
}

function CreateTeam({ onCreated }: { onCreated: () => void }) {
  const [message, setMessage] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    try {
      const id = String(fields.get('id'));
      await api('POST', '/admin/v1/teams', { id, models: listOf(fields.get('models')), limits: limitsOf(fields) });
      form.reset();
      setMessage(`Team ${id} created.`);
      onCreated();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  return (
    <details class="create">
      <summary>Create a team</summary>
      <form onSubmit={submit}>
        <label>
          Id <input name="id" required />
        </label>
        <label>
          Models (comma-separated; empty: all) <input name="models" />
        </label>
        {LIMIT_FIELDS.map(([key, label]) => (
          <label key={key}>
            {label} <input name={key} type="number" min="0" step="any" />
          </label>
        ))}
        <button type="submit">Create team</button>
      </form>
      {message && <p role="status">{message}</p>}
    </details>
  );
}
