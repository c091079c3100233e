import { useState } from 'preact/hooks';
import { LIMIT_CATALOGUE, LIMIT_NAMES, type LimitName } from '../../../core/limit-catalogue';
import { may } from '../access';
import { api, daysAgo, monthStart, utcDay, type Usage } from '../api';
import { DailyChart, daysBetween } from '../chart';
import { formatCost, formatLimitValue, formatMoney, formatNumber, limitLabel, spendOf } from '../format';
import { LIMIT_FIELDS, limitChanges, listOf, metadataChanges, type Limits } from '../limits-form';
import { NO_MCP, type TeamMcp } from '../mcp-form';
import { Meter } from '../meter';
import { useLoad } from '../use-load';
import { Members } from './members';
import { CeilingView, EditCeiling, type Ceiling } from './team-ceiling';
import { SelfServiceTokens } from './self-service';
import { TeamLogging, type ContentSetting } from './team-logging';
import { TeamMcpPermissions } from './team-mcp';
import { TeamResponseCache } from './team-response-cache';
import { Tokens } from './tokens';

interface Team {
  id: string;
  models: string[];
  limits: Limits;
  ceiling: Ceiling;
  metadata?: Record<string, string>;
  disabled?: boolean;
  selfServiceTokens?: boolean;
  logging?: { content: ContentSetting };
  responseCache?: boolean;
  mcp?: TeamMcp;
}
interface Budget {
  currency: string;
  budgets: Array<{ budget: string; limit: number; spent: number; used_ratio: number; resets_at: string }>;
}

/**
 * One team, as far as the person may see it: who may read its settings gets its settings, tokens, members, usage
 * and limits; who may only read its usage and spend (a team-member) gets those.
 */
export function TeamPage({ team }: { team: string }) {
  return may('teams:read', team) ? <TeamSettings team={team} /> : <TeamUsageOnly team={team} />;
}

/** The team's usage by day and model, and its budget (GET .../budget): what every role of the team may read. */
function useTeamUsage(id: string) {
  const today = utcDay();
  return useLoad(
    () =>
      Promise.all([
        api<Usage>(
          'GET',
          `/admin/v1/usage?team=${encodeURIComponent(id)}&from=${[monthStart(), daysAgo(29)].sort()[0]}&to=${today}&groupBy=day`,
        ),
        api<Usage>(
          'GET',
          `/admin/v1/usage?team=${encodeURIComponent(id)}&from=${daysAgo(29)}&to=${today}&groupBy=model`,
        ),
        api<Budget>('GET', `/admin/v1/teams/${encodeURIComponent(id)}/budget`),
      ]),
    [id, today],
  );
}

/** A team's usage and spend alone; its budgets (from the budget read) are the limits shown. */
function TeamUsageOnly({ team: id }: { team: string }) {
  const usage = useTeamUsage(id);
  const budgets = Object.fromEntries(
    (usage.data?.[2].budgets ?? []).map((b) => [b.budget, b.limit]),
  ) as Limits;
  return (
    <section>
      <p>
        <a href="#/teams">Teams</a> /
      </p>
      <h1>{id}</h1>
      {usage.data && <TeamUsage usage={usage.data} limits={budgets} />}
      {usage.error && <p class="error">{usage.error}</p>}
      {!usage.data && !usage.error && <p class="loading">Loading…</p>}
    </section>
  );
}

/** The team's settings (with what the person may change of them), tokens, members, usage and limits. */
function TeamSettings({ team: id }: { team: string }) {
  const path = `/admin/v1/teams/${encodeURIComponent(id)}`;
  const team = useLoad(() => api<Team>('GET', path), [id]);
  const usage = useTeamUsage(id);
  const [deleted, setDeleted] = useState(false);
  const [error, setError] = useState('');
  if (deleted)
    return (
      <p role="status">
        Team {id} deleted. <a href="#/teams">Back to teams</a>
      </p>
    );
  if (team.error) return <p class="error">{team.error}</p>;
  if (!team.data) return <p class="loading">Loading…</p>;
  const t = team.data;
  // A change to the team can change what its usage section shows (a new budget has a spend to show): both reload.
  const reload = () => {
    team.reload();
    usage.reload();
  };

  const act = async (method: string, suffix: string) => {
    setError('');
    await api(method, `${path}${suffix}`).catch((e: Error) => setError(e.message));
    reload();
  };
  const remove = async () => {
    if (!confirm(`Delete team ${id} and revoke its tokens?`)) return;
    await api('DELETE', `${path}?force=true`).then(
      () => setDeleted(true),
      (e: Error) => setError(e.message),
    );
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
        {may('teams:write', id) && (
          <>
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
          </>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
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
      {usage.data && <TeamUsage usage={usage.data} limits={t.limits ?? {}} />}
      {usage.error && <p class="error">{usage.error}</p>}
      <CeilingView ceiling={t.ceiling ?? null} currency={usage.data?.[2].currency ?? ''} />
      {may('tokens:read', id) && <Tokens team={id} canChange={may('tokens:write', id)} />}
      {may('tokens:read', id) && (
        <SelfServiceTokens
          team={id}
          on={t.selfServiceTokens === true}
          canChange={may('teams:adjust', id)}
          onSaved={reload}
        />
      )}
      <TeamLogging
        team={id}
        content={t.logging?.content ?? null}
        canChange={may('teams:adjust', id)}
        onSaved={reload}
      />
      <TeamResponseCache
        team={id}
        on={t.responseCache !== false}
        canChange={may('teams:adjust', id)}
        onSaved={reload}
      />
      <TeamMcpPermissions
        team={id}
        mcp={t.mcp ?? NO_MCP}
        canChange={may('teams:write', id)}
        onSaved={reload}
      />
      {may('members:read', id) && <Members team={id} canChange={may('members:write', id)} />}
      {may('teams:write', id) ? (
        <>
          <EditTeam team={t} onSaved={reload} />
          <EditCeiling team={id} ceiling={t.ceiling ?? null} onSaved={reload} />
        </>
      ) : (
        may('teams:adjust', id) && <EditTeam team={t} onSaved={reload} withinCeiling />
      )}
    </section>
  );
}

function TeamUsage({
  usage: [byDay, byModel, budget],
  limits,
}: {
  usage: [Usage, Usage, Budget];
  limits: Limits;
}) {
  const today = utcDay();
  const days = daysBetween(daysAgo(29), today);
  const currency = byDay.currency;
  const money = (amount: number) => formatMoney(amount, currency);
  const at = (day: string) => byDay.data.find((r) => r.day === day);
  const tokensToday = at(today)?.total_tokens ?? 0;
  const tokensMonth = byDay.data
    .filter((r) => r.day! >= monthStart())
    .reduce((n, r) => n + r.total_tokens, 0);
  return (
    <>
      <h2>Usage</h2>
      <DailyChart
        title="Tokens per day"
        days={days}
        series={[{ label: 'tokens', values: days.map((d) => at(d)?.total_tokens ?? 0), color: '#059669' }]}
      />
      <DailyChart
        title="Requests per day"
        days={days}
        series={[{ label: 'requests', values: days.map((d) => at(d)?.requests ?? 0), color: '#2563eb' }]}
      />
      <DailyChart
        title={`Spend per day (${currency})`}
        days={days}
        format={money}
        series={[
          {
            label: 'spend',
            values: days.map((d) => spendOf(byDay.data.filter((r) => r.day === d))),
            color: '#d97706',
          },
        ]}
      />
      <h3>By model, last 30 days</h3>
      <div class="scroll">
        <table data-testid="usage-by-model">
          <thead>
            <tr>
              <th>Model</th>
              <th class="num">Requests</th>
              <th class="num">Tokens</th>
              <th class="num">Spend</th>
            </tr>
          </thead>
          <tbody>
            {byModel.data.length === 0 && (
              <tr>
                <td colSpan={4} class="muted">
                  No requests in the last 30 days.
                </td>
              </tr>
            )}
            {byModel.data.map((r) => (
              <tr key={r.model}>
                <td>{r.model}</td>
                <td class="num">{formatNumber(r.requests)}</td>
                <td class="num">{formatNumber(r.total_tokens)}</td>
                <td class="num">
                  {formatCost(r.cost_nanos, byModel.currency, r.cost_unknown_requests, r.requests)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h3>Limits</h3>
      <LimitsList limits={limits} tokensToday={tokensToday} tokensMonth={tokensMonth} budget={budget} />
    </>
  );
}

/**
 * Every limit the team has, in the catalogue's order and by its label: day and month quotas and budgets with how
 * full they are now; per-minute limits and concurrency with their value only (their windows are too short to
 * keep, so there is no "now" to show).
 */
function LimitsList({
  limits,
  tokensToday,
  tokensMonth,
  budget,
}: {
  limits: Limits;
  tokensToday: number;
  tokensMonth: number;
  budget: Budget;
}) {
  const set = LIMIT_NAMES.filter((name) => limits[name] !== undefined);
  if (set.length === 0) return <p class="muted">No limits.</p>;
  const use = (name: LimitName): { used: number; label: string } | undefined => {
    const limit = limits[name]!;
    if (name === 'tokensPerDay')
      return {
        used: tokensToday,
        label: `${formatNumber(tokensToday)} of ${formatNumber(limit)} tokens today`,
      };
    if (name === 'tokensPerMonth')
      return {
        used: tokensMonth,
        label: `${formatNumber(tokensMonth)} of ${formatNumber(limit)} tokens this month`,
      };
    const spend = budget.budgets.find((b) => b.budget === name);
    if (spend)
      return {
        used: spend.spent,
        label: `${formatMoney(spend.spent, budget.currency)} of ${formatMoney(spend.limit, budget.currency)} spent`,
      };
    return undefined;
  };
  const unwindowed = set.filter(
    (name) => LIMIT_CATALOGUE[name].window === undefined || LIMIT_CATALOGUE[name].window === 'minute',
  );
  return (
    <>
      <ul class="limits" data-testid="limits">
        {set.map((name) => {
          const now = unwindowed.includes(name) ? undefined : use(name);
          return (
            <li key={name}>
              <span class="limit-name">{limitLabel(name)}</span>
              {now ? (
                <>
                  <Meter label={limitLabel(name)} value={now.used} max={limits[name]!} />
                  <span class="muted">{now.label}</span>
                </>
              ) : (
                <span>{formatLimitValue(name, limits[name]!, budget.currency)}</span>
              )}
            </li>
          );
        })}
      </ul>
      {unwindowed.length > 0 && (
        <p class="muted note">
          Per-minute limits and concurrency are enforced as requests arrive; their use is not kept, so only
          their values are shown.
        </p>
      )}
    </>
  );
}

/**
 * The settings form. It sends only what was changed from the values it was filled with, as the admin API's merge
 * patch: `models` (a list, replaced) when it differs; in `limits` only the limits changed (a new value, or `null`
 * for a field emptied, which removes that limit); in `metadata` only the labels changed (`null` for one removed).
 * Nothing changed, nothing is sent. It is filled again from the saved team after each save.
 */
function EditTeam({
  team,
  onSaved,
  withinCeiling = false,
}: {
  team: Team;
  onSaved: () => void;
  /** A team-admin's form: models and limits only, each field showing its bound (the ceiling, else today's). */
  withinCeiling?: boolean;
}) {
  const modelsBound = team.ceiling?.models ?? team.models;
  const limitBound = (name: LimitName): number | undefined =>
    team.ceiling?.limits ? team.ceiling.limits[name] : team.limits?.[name];
  const [message, setMessage] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const fields = new FormData(event.currentTarget as HTMLFormElement);
    try {
      const changes: {
        models?: string[];
        limits?: Record<string, number | null>;
        metadata?: Record<string, string | null>;
      } = {};
      const models = listOf(fields.get('models')) ?? ['*'];
      if (models.join('\n') !== team.models.join('\n')) changes.models = models;
      const limits = limitChanges(fields, team.limits ?? {});
      if (limits) changes.limits = limits;
      // Labels are the organisation's: a team-admin's form has no field for them, and sends none.
      const metadata = withinCeiling
        ? undefined
        : metadataChanges(
            team.metadata ?? {},
            JSON.parse(String(fields.get('metadata') || '{}')) as Record<string, string>,
          );
      if (metadata) changes.metadata = metadata;
      if (Object.keys(changes).length === 0) return setMessage('Nothing changed.');
      await api('PATCH', `/admin/v1/teams/${encodeURIComponent(team.id)}`, changes);
      setMessage('Saved.');
      onSaved();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  return (
    <details class="create">
      <summary>
        {withinCeiling ? 'Models and limits, within the ceiling' : 'Edit models, limits and metadata'}
      </summary>
      {withinCeiling && (
        <p class="muted note">
          As a team-admin you may set this team's models and limits anywhere within its ceiling, up to it as
          well as down; where the ceiling sets no bound, today's values are the bound. Going above it takes an
          org-admin (the gateway refuses it and says why).
        </p>
      )}
      {/* Keyed by the settings as saved: a reload that changed them fills the form again, and is what the next
          save is compared with (enabling or disabling the team leaves an edit in progress alone). */}
      <form
        key={JSON.stringify([team.models, team.limits, team.metadata])}
        onSubmit={submit}
        onInput={() => setMessage('')}
      >
        <label>
          Models (comma-separated){' '}
          <input name="models" aria-label="Models (comma-separated)" defaultValue={team.models.join(', ')} />
          {withinCeiling && <span class="muted bound">within {modelsBound.join(', ')}</span>}
        </label>
        {LIMIT_FIELDS.map(([key, label]) => (
          <label key={key}>
            {label}{' '}
            <input
              name={key}
              aria-label={label}
              type="number"
              min="0"
              step="any"
              defaultValue={team.limits?.[key] === undefined ? '' : String(team.limits[key])}
            />
            {withinCeiling && limitBound(key) !== undefined && (
              <span class="muted bound" data-testid={`bound-${key}`}>
                at most {formatNumber(limitBound(key)!)}
              </span>
            )}
          </label>
        ))}
        {!withinCeiling && (
          <label class="wide">
            Metadata (JSON object of strings){' '}
            <textarea name="metadata" defaultValue={JSON.stringify(team.metadata ?? {}, null, 1)} />
          </label>
        )}
        <button type="submit">Save</button>
      </form>
      {message && <p role="status">{message}</p>}
    </details>
  );
}
