import { useState } from 'preact/hooks';
import { may, mayAnywhere, teamsWhere } from '../access';
import { api, utcDay } from '../api';
import { describeLimits, formatNumber } from '../format';
import { LIMIT_FIELDS, limitsOf, listOf, type Limits } from '../limits-form';
import { Meter } from '../meter';
import { useLoad } from '../use-load';

const PAGE = 50;

interface Team {
  id: string;
  models: string[];
  limits: Limits;
  disabled?: boolean;
}
interface TeamPage {
  data: Team[];
  has_more: boolean;
}

/**
 * The teams the person may see. Who may read teams' settings gets the full list; who may only read usage and
 * spend (a team-member) gets their teams' names, each a link to its usage.
 */
export function TeamsPage() {
  return mayAnywhere('teams:read') ? <TeamList /> : <MyTeams />;
}

/** A team-member's teams, from their roles (the admin API lists teams only to those who may read them). */
function MyTeams() {
  const teams = teamsWhere('usage:read');
  return (
    <section>
      <h1>Teams</h1>
      <ul class="my-teams" data-testid="my-teams">
        {teams === 'all' || teams.length === 0 ? (
          <li class="muted">No teams.</li>
        ) : (
          teams.map((team) => (
            <li key={team}>
              <a href={`#/teams/${encodeURIComponent(team)}`}>{team}</a>
            </li>
          ))
        )}
      </ul>
    </section>
  );
}

/**
 * Teams, a page at a time (the admin API pages by id and shows a team-scoped person only their teams), with a
 * search, a create form (for who may create), and for each team its limits and how full its own day's token quota
 * and budgets are (a team without a quota shows its count alone).
 */
function TeamList() {
  const [search, setSearch] = useState('');
  const [pages, setPages] = useState<string[]>(['']); // the `after` of each page seen, for Previous
  const after = pages[pages.length - 1];
  const teams = useLoad(
    () =>
      api<TeamPage>(
        'GET',
        `/admin/v1/teams?limit=${PAGE}&search=${encodeURIComponent(search)}${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      ),
    [search, after],
  );
  const today = utcDay();
  const usage = useLoad(
    () =>
      api<{ currency: string; data: Array<{ team: string; total_tokens: number }> }>(
        'GET',
        `/admin/v1/usage?from=${today}&to=${today}&groupBy=day`,
      ),
    [today],
  );
  const currency = usage.data?.currency ?? 'USD';
  const tokensToday = new Map((usage.data?.data ?? []).map((r) => [r.team, r.total_tokens]));
  // Budget bars for the page's teams that have a budget (one call each, only for those).
  const budgeted = (teams.data?.data ?? [])
    .filter((t) => t.limits?.budgetPerDay !== undefined || t.limits?.budgetPerMonth !== undefined)
    .map((t) => t.id);
  const budgets = useLoad(
    () =>
      Promise.all(
        budgeted.map((id) =>
          api<{ team: string; budgets: Array<{ budget: string; used_ratio: number }> }>(
            'GET',
            `/admin/v1/teams/${encodeURIComponent(id)}/budget`,
          ),
        ),
      ),
    [budgeted.join()],
  );
  const budgetUse = new Map(
    (budgets.data ?? []).map((b) => [b.team, Math.max(0, ...b.budgets.map((x) => x.used_ratio))]),
  );

  return (
    <section>
      <h1>Teams</h1>
      {may('teams:create') && <CreateTeam onCreated={() => teams.reload()} />}
      <input
        class="search"
        type="search"
        placeholder="Search team ids"
        value={search}
        onInput={(e) => (setSearch((e.target as HTMLInputElement).value), setPages(['']))}
        aria-label="Search teams"
      />
      {teams.error && <p class="error">{teams.error}</p>}
      <div class="scroll">
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
                <td>
                  {team.disabled ? (
                    <span class="badge off">disabled</span>
                  ) : (
                    <span class="badge on">active</span>
                  )}
                </td>
                <td class="wrap">{team.models.join(', ')}</td>
                <td class="muted">
                  {describeLimits(team.limits ?? {}, currency).map((line) => (
                    <div key={line}>{line}</div>
                  ))}
                  {Object.keys(team.limits ?? {}).length === 0 && 'none'}
                </td>
                <td>
                  <TokensToday team={team} used={tokensToday.get(team.id) ?? 0} />
                </td>
                <td>
                  {budgetUse.has(team.id) ? (
                    <span class="fill">
                      <Meter label={`Budget used by ${team.id}`} value={budgetUse.get(team.id)!} max={1} />
                      <span class="num" data-testid={`budget-${team.id}`}>
                        {(budgetUse.get(team.id)! * 100).toFixed(0)} %
                      </span>
                    </span>
                  ) : (
                    <span class="muted">no budget</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          Previous
        </button>
        <button
          type="button"
          disabled={!teams.data?.has_more}
          onClick={() => setPages([...pages, teams.data!.data[teams.data!.data.length - 1].id])}
        >
          Next
        </button>
      </div>
    </section>
  );
}

/** Today's tokens against the team's own daily quota; without one there is nothing to be full against. */
function TokensToday({ team, used }: { team: Team; used: number }) {
  const quota = team.limits?.tokensPerDay;
  if (quota === undefined) {
    return (
      <span class="fill">
        <span class="num">{formatNumber(used)}</span> <span class="muted">no daily quota</span>
      </span>
    );
  }
  return (
    <span class="fill">
      <Meter label={`Tokens today of ${team.id}`} value={used} max={quota} />
      <span class="num">
        {formatNumber(used)} / {formatNumber(quota)}
      </span>
    </span>
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
      await api('POST', '/admin/v1/teams', {
        id,
        models: listOf(fields.get('models')),
        limits: limitsOf(fields),
      });
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
