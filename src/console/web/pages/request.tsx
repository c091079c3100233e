import type { ComponentChildren } from 'preact';
import { formatNumber } from '../format';
import { answerMessages, isTruncated, requestMessages, type ShownMessage } from '../request-content';
import {
  getRequest,
  isMcp,
  mcpTargetLabel,
  timeline,
  type Attempt,
  type RequestDetail,
} from '../request-log';
import { useLoad } from '../use-load';
import { cost, ms, modelText, showTrace, StatusBadge, time } from './requests';

/**
 * One request of the log (#/requests/<id>): who sent it and how it ended, its attempts as a timeline, usage and
 * cost, and what was sent and answered (redacted) when its team keeps content. An MCP request (a tool call, a prompt
 * get, a resource read) has its tool, prompt or resource and its server instead of a model and deployments, and no
 * usage, cost or attempts.
 */
export function RequestPage({ id }: { id: string }) {
  const { data: entry, error } = useLoad(() => getRequest(id), [id]);
  return (
    <section>
      <p>
        <a href="#/requests">← Requests</a>
      </p>
      <h1>
        Request <code>{id}</code>
      </h1>
      {error && <p class="error">{error}</p>}
      {entry && <Detail entry={entry} />}
    </section>
  );
}

function Detail({ entry }: { entry: RequestDetail }) {
  const mcp = isMcp(entry);
  const field = (label: string, value: ComponentChildren) => (
    <>
      <span class="muted">{label}</span>
      <span>{value}</span>
    </>
  );
  return (
    <>
      <div class="metadata" data-testid="request-fields">
        {field('Time (UTC)', time(entry.at))}
        {field('Team', <a href={`#/teams/${encodeURIComponent(entry.team)}`}>{entry.team}</a>)}
        {field('Token', `${entry.token.name ?? '(no name)'} (${entry.token.id})`)}
        {field('Person', entry.person ? (entry.person.email ?? entry.person.subject) : 'none (a team token)')}
        {field('Endpoint', `${entry.endpoint}${entry.stream ? ', streamed' : ''}`)}
        {mcp ? (
          <>
            {field(mcpTargetLabel(entry), entry.model)}
            {field('MCP server', mcpServerOf(entry))}
          </>
        ) : (
          <>
            {field('Model', modelText(entry))}
            {field('Deployment', entry.deployment ?? 'none')}
          </>
        )}
        {field('Status', <StatusBadge entry={entry} />)}
        {field('Outcome', `${entry.outcome}${entry.errorCode ? ` (${entry.errorCode})` : ''}`)}
        {field('Latency', ms(entry.latencyMs))}
        {!mcp && field('Time to first byte', ms(entry.ttfbMs))}
        {field('Request id', <code>{entry.requestId}</code>)}
        {field(
          'Trace id',
          entry.traceId ? (
            <>
              <code>{entry.traceId}</code>{' '}
              <button type="button" onClick={() => showTrace(entry.traceId!)}>
                Requests in this trace
              </button>
            </>
          ) : (
            'none'
          ),
        )}
        {field('Client address', entry.clientAddress ?? 'unknown')}
      </div>
      {!mcp && (
        <>
          <h2>Usage and cost</h2>
          <div class="cards" data-testid="request-usage">
            <Card label="Tokens in" value={formatNumber(entry.usage.prompt)} />
            <Card label="Tokens out" value={formatNumber(entry.usage.completion)} />
            <Card label="Reasoning" value={formatNumber(entry.usage.reasoning)} />
            <Card label="Cached" value={formatNumber(entry.usage.cached)} />
            <Card label="Cost" value={cost(entry.cost, entry.currency)} />
          </div>
          {entry.usage.estimated && (
            <p class="muted note">Counted by the gateway's tokenizer: the upstream reported no usage.</p>
          )}
          <h2>Attempts</h2>
          <Attempts attempts={entry.attempts} latencyMs={entry.latencyMs} />
        </>
      )}
      <h2>Content</h2>
      <Content entry={entry} />
    </>
  );
}

/**
 * The server an MCP request went to: its deployment is `<server>/<tool>` (or `<server>` for a resource read); one
 * refused before it was sent went to none.
 */
function mcpServerOf(entry: RequestDetail): string {
  if (entry.deployment === null) return 'none (refused before it was sent)';
  return entry.endpoint === 'mcp.resources/read' ? entry.deployment : entry.deployment.split('/')[0];
}

function Card({ label, value }: { label: string; value: string }) {
  return (
    <div class="card">
      <span>{label}</span>
      <strong>{value}</strong>
    </div>
  );
}

/**
 * Every attempt in order, each a bar placed where it ran on the request's timeline and as long as it took, with its
 * deployment, outcome, status and error; candidates passed over before any call say why, with no bar.
 */
function Attempts({ attempts, latencyMs }: { attempts: Attempt[]; latencyMs: number }) {
  if (attempts.length === 0) return <p class="muted">No deployment was called.</p>;
  const bars = timeline(attempts, latencyMs);
  return (
    <ol class="timeline" data-testid="attempts">
      {attempts.map((attempt, i) => (
        <li key={i} data-kind={attempt.kind}>
          <div class="timeline-label">
            <code>{attempt.deployment}</code>{' '}
            {attempt.kind === 'call' ? (
              <>
                <span class={`badge ${attempt.outcome === 'ok' ? 'on' : 'off'}`}>{attempt.outcome}</span>{' '}
                <span>{attempt.status === null ? 'no answer' : `HTTP ${attempt.status}`}</span>{' '}
                <span class="muted">{ms(attempt.durationMs)}</span>
              </>
            ) : (
              <span class="muted">skipped: {attempt.reason}</span>
            )}
            {attempt.model && <span class="muted"> (model {attempt.model})</span>}
          </div>
          {attempt.kind === 'call' && (
            <div class="timeline-track" aria-hidden="true">
              <div
                class={`timeline-bar ${attempt.outcome === 'ok' ? 'ok' : 'failed'}`}
                style={{ left: `${bars[i].start * 100}%`, width: `${Math.max(bars[i].width * 100, 0.5)}%` }}
              />
            </div>
          )}
          {attempt.kind === 'call' && attempt.error && <p class="error attempt-error">{attempt.error}</p>}
        </li>
      ))}
    </ol>
  );
}

/** What was sent and answered, as text; or why there is none. */
function Content({ entry }: { entry: RequestDetail }) {
  if (!entry.contentKept)
    return (
      <p class="muted">Not kept: this team's requests are logged without content (logging.content: none).</p>
    );
  if (!entry.content) return <p class="muted">Kept, but no longer: the content's retention has passed.</p>;
  return (
    <div class="columns content" data-testid="request-content">
      <Side title="Request" side={entry.content.request} messages={requestMessages} />
      <Side title="Answer" side={entry.content.response} messages={answerMessages} />
    </div>
  );
}

function Side({
  title,
  side,
  messages,
}: {
  title: string;
  side: unknown;
  messages: (side: unknown) => ShownMessage[] | null;
}) {
  if (side === null || side === undefined)
    return (
      <div data-side={title}>
        <h3>{title}</h3>
        <p class="muted">None.</p>
      </div>
    );
  if (isTruncated(side))
    return (
      <div data-side={title}>
        <h3>{title}</h3>
        <p class="note" role="note">
          Too big to keep whole: its first {formatNumber(side.text.length)} of {formatNumber(side.chars)}{' '}
          characters, as JSON text.
        </p>
        <pre>{side.text}</pre>
      </div>
    );
  const shown = messages(side);
  return (
    <div data-side={title}>
      <h3>{title}</h3>
      {shown?.map((message, i) => (
        <div class="message" key={i}>
          <span class="muted">{message.role}</span>
          <pre>{message.text}</pre>
        </div>
      ))}
      <details>
        <summary>{shown ? 'As JSON' : 'JSON'}</summary>
        <pre>{JSON.stringify(side, null, 2)}</pre>
      </details>
    </div>
  );
}
