import { useState } from 'preact/hooks';
import { mayAnywhere, teamsWhere } from '../access';
import { api } from '../api';
import { DataTable } from '../data-table';
import { formatMoney, formatNumber } from '../format';
import {
  ENDPOINTS,
  isMcp,
  OUTCOMES,
  listRequests,
  localInput,
  NO_FILTER,
  utcInstant,
  type RequestEntry,
  type RequestFilter,
} from '../request-log';
import { useLoad } from '../use-load';

const PAGE = 50;

/**
 * What the list shows, kept while the person looks at one request and comes back (#/requests/<id> is a page of its
 * own, so it can be linked): the filters and the cursors of the pages seen.
 */
let remembered: { filter: RequestFilter; pages: string[] } = { filter: NO_FILTER, pages: [''] };

/** Opens the list filtered to one trace (from a request's page). */
export function showTrace(traceId: string): void {
  remembered = { filter: { ...NO_FILTER, traceId }, pages: [''] };
  location.hash = '#/requests';
}

export const time = (iso: string) => iso.slice(0, 19).replace('T', ' ');
/** A duration: tenths under 10 ms (a cached answer, a refusal), whole milliseconds above. */
export const ms = (value: number | null) =>
  value === null ? '-' : `${formatNumber(value < 10 ? Math.round(value * 10) / 10 : Math.round(value))} ms`;
export const cost = (value: number | null, currency: string) =>
  value === null ? 'unpriced' : formatMoney(value, currency);

/**
 * `model` when it answered itself, `model → fallback` when another did, `model → none` when nothing answered. An MCP
 * request names its tool (`<server>__<tool>`), prompt or resource URI alone: nothing stands in for it, and its status
 * says whether it was served.
 */
export function modelText(entry: Pick<RequestEntry, 'endpoint' | 'model' | 'servedModel'>): string {
  if (entry.servedModel === entry.model || isMcp(entry)) return entry.model;
  return `${entry.model} → ${entry.servedModel || 'none'}`;
}

/** The HTTP status the client got, and what went wrong when something did (its error code, else the outcome). */
export function StatusBadge({ entry }: { entry: Pick<RequestEntry, 'status' | 'outcome' | 'errorCode'> }) {
  const ok = entry.outcome === 'ok';
  return (
    <span class={`badge ${ok ? 'on' : 'off'}`} title={entry.outcome}>
      {entry.status}
      {ok ? '' : ` ${entry.errorCode ?? entry.outcome}`}
    </span>
  );
}

/**
 * The request log, newest first, a page at a time: filtered by team (those the person may read: every team, or
 * theirs), model (asked for or served), HTTP status, endpoint, time and trace id. Each row opens the request.
 */
export function RequestsPage() {
  const [filter, setFilter] = useState(remembered.filter);
  const [pages, setPages] = useState(remembered.pages);
  remembered = { filter, pages };
  const after = pages[pages.length - 1];
  const key = JSON.stringify([filter, after]);
  const { data, error } = useLoad(() => listRequests(filter, PAGE, after), [key]);
  const teams = useLoad(readableTeams, []);

  const apply = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(event.currentTarget as HTMLFormElement);
    const field = (name: string) => String(fields.get(name) ?? '').trim();
    setFilter({
      team: field('team'),
      model: field('model'),
      status: field('status'),
      outcome: field('outcome'),
      endpoint: field('endpoint'),
      from: utcInstant(field('from')),
      to: utcInstant(field('to')),
      traceId: field('traceId').toLowerCase(),
    });
    setPages(['']);
  };
  const clear = (event: Event) => {
    (event.currentTarget as HTMLButtonElement).form?.reset();
    setFilter(NO_FILTER);
    setPages(['']);
  };

  return (
    <section>
      <h1>Requests</h1>
      <form class="inline filters" onSubmit={apply} aria-label="Filter requests" key={JSON.stringify(filter)}>
        <TeamSelect value={filter.team} teams={teams.data} />
        <input name="model" defaultValue={filter.model} placeholder="Model" aria-label="Model" />
        <input
          name="status"
          type="number"
          min="100"
          max="599"
          defaultValue={filter.status}
          placeholder="HTTP status"
          aria-label="Status"
        />
        <select name="outcome" aria-label="Outcome">
          <option value="">Any outcome</option>
          {OUTCOMES.map((outcome) => (
            <option key={outcome} value={outcome} selected={outcome === filter.outcome}>
              {outcome}
            </option>
          ))}
        </select>
        <select name="endpoint" aria-label="Endpoint">
          <option value="">Any endpoint</option>
          {ENDPOINTS.map((endpoint) => (
            <option key={endpoint} value={endpoint} selected={endpoint === filter.endpoint}>
              {endpoint}
            </option>
          ))}
        </select>
        <label>
          From (UTC)
          <input name="from" type="datetime-local" defaultValue={localInput(filter.from)} aria-label="From" />
        </label>
        <label>
          To (UTC)
          <input name="to" type="datetime-local" defaultValue={localInput(filter.to)} aria-label="To" />
        </label>
        <input
          name="traceId"
          defaultValue={filter.traceId}
          pattern="[0-9a-fA-F]{32}"
          title="32 hex digits"
          placeholder="Trace id"
          aria-label="Trace id"
        />
        <button type="submit">Filter</button>
        <button type="button" onClick={clear}>
          Clear
        </button>
      </form>
      {error && <p class="error">{error}</p>}
      <DataTable
        testId="requests"
        columns={[
          'Time (UTC)',
          'Team',
          'Token',
          'Endpoint',
          'Model or tool',
          'Status',
          { label: 'Latency', num: true },
          { label: 'TTFB', num: true },
          { label: 'Tokens in / out', num: true },
          { label: 'Cost', num: true },
        ]}
        rows={data?.data}
        empty="No requests match."
        row={(r) => (
          <tr key={r.id} data-request={r.id}>
            <td>
              <a href={`#/requests/${encodeURIComponent(r.id)}`}>{time(r.at)}</a>
            </td>
            <td>{r.team}</td>
            <td title={r.token.id}>{r.token.name ?? r.token.id}</td>
            <td>
              {r.endpoint}
              {r.stream ? <span class="muted"> stream</span> : ''}
            </td>
            <td>{modelText(r)}</td>
            <td>
              <StatusBadge entry={r} />
            </td>
            <td class="num">{ms(r.latencyMs)}</td>
            <td class="num">{ms(r.ttfbMs)}</td>
            {isMcp(r) ? (
              // An MCP request has no tokens and no price: neither 0 nor free.
              <>
                <td class="num muted">-</td>
                <td class="num muted">-</td>
              </>
            ) : (
              <>
                <td class="num">
                  {formatNumber(r.usage.prompt)} / {formatNumber(r.usage.completion)}
                  {r.usage.estimated ? <span class="muted"> est.</span> : ''}
                </td>
                <td class="num">{cost(r.cost, data!.currency)}</td>
              </>
            )}
          </tr>
        )}
      />
      <div class="pager">
        <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          Newer
        </button>
        <button type="button" disabled={!data?.next} onClick={() => setPages([...pages, data!.next!])}>
          Older
        </button>
      </div>
    </section>
  );
}

/**
 * The teams the person may read requests of: every team (the admin API's list, for who may read teams: its first
 * 1,000) or their own, from their roles.
 */
async function readableTeams(): Promise<string[]> {
  const granted = teamsWhere('requests:read');
  if (granted !== 'all') return granted;
  if (!mayAnywhere('teams:read')) return [];
  const page = await api<{ data: Array<{ id: string }> }>('GET', '/admin/v1/teams?limit=1000');
  return page.data.map((team) => team.id);
}

/** "All" is every team the person may read (the API holds a team-scoped person to theirs), or one of them. */
function TeamSelect({ value, teams = [] }: { value: string; teams?: string[] }) {
  return (
    <select name="team" aria-label="Team">
      <option value="">{teamsWhere('requests:read') === 'all' ? 'All teams' : 'All my teams'}</option>
      {(value && !teams.includes(value) ? [value, ...teams] : teams).map((team) => (
        <option key={team} value={team} selected={team === value}>
          {team}
        </option>
      ))}
    </select>
  );
}
