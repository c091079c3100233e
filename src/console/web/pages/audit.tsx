import { useState } from 'preact/hooks';
import { api } from '../api';
import { useLoad } from '../use-load';

interface Entry {
  id: string;
  at: string;
  actor: string;
  ip: string | null;
  action: string;
  target: string;
  details: Record<string, unknown>;
}

const PAGE = 50;

/** `team/acme-ml/token/<id>`, which may wrap after a slash only, never inside a name (`acme-|ml`). */
function PathText({ path }: { path: string }) {
  const parts = path.split('/');
  return (
    <>
      {parts.map((part, i) => (
        <>
          <span class="nowrap">{i < parts.length - 1 ? `${part}/` : part}</span>
          {i < parts.length - 1 && <wbr />}
        </>
      ))}
    </>
  );
}

/** The audit trail, newest first, filtered by action and target, a page at a time. */
export function AuditPage() {
  const [filter, setFilter] = useState({ action: '', target: '' });
  const [pages, setPages] = useState<string[]>(['']);
  const before = pages[pages.length - 1];
  const query = new URLSearchParams({
    limit: String(PAGE),
    ...(filter.action ? { action: filter.action } : {}),
    ...(filter.target ? { target: filter.target } : {}),
    ...(before ? { before } : {}),
  });
  const { data, error } = useLoad(
    () => api<{ data: Entry[]; has_more: boolean }>('GET', `/admin/v1/audit?${query}`),
    [query.toString()],
  );
  const apply = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(event.currentTarget as HTMLFormElement);
    setFilter({
      action: String(fields.get('action') ?? '').trim(),
      target: String(fields.get('target') ?? '').trim(),
    });
    setPages(['']);
  };
  return (
    <section>
      <h1>Audit trail</h1>
      <form class="inline" onSubmit={apply}>
        <input name="action" placeholder="Action, e.g. token.revoke" aria-label="Action" />
        <input name="target" placeholder="Target, e.g. team/acme" aria-label="Target" />
        <button type="submit">Filter</button>
      </form>
      {error && <p class="error">{error}</p>}
      <div class="scroll">
        <table data-testid="audit">
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Actor</th>
              <th>Action</th>
              <th>Target</th>
              <th>From</th>
              <th>Details</th>
            </tr>
          </thead>
          <tbody>
            {(data?.data ?? []).map((e) => (
              <tr key={e.id}>
                <td class="nowrap">{e.at.slice(0, 19).replace('T', ' ')}</td>
                <td>{e.actor}</td>
                <td>{e.action}</td>
                <td class="wrap">
                  <PathText path={e.target} />
                </td>
                <td>{e.ip ?? '-'}</td>
                <td class="muted wrap">
                  {Object.entries(e.details)
                    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`)
                    .join(', ')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          Newer
        </button>
        <button
          type="button"
          disabled={!data?.has_more}
          onClick={() => setPages([...pages, data!.data[data!.data.length - 1].id])}
        >
          Older
        </button>
      </div>
    </section>
  );
}
