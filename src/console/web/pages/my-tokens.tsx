import { useState } from 'preact/hooks';
import { may } from '../access';
import { api } from '../api';
import { DataTable } from '../data-table';
import { SecretOnce } from '../secret-once';
import { useLoad } from '../use-load';
import { Tokens } from './tokens';

/** A personal admin token as GET /admin/v1/me/tokens lists it. */
interface AdminToken {
  id: string;
  subject: string;
  name: string;
  prefix: string;
  status: string;
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
}

/** GET /admin/v1/me: the teams where the person may keep team tokens of their own. */
interface Me {
  own_token_teams: string[];
}

const MAX_DAYS = 90;
const day = (iso: string | null) => iso?.slice(0, 16).replace('T', ' ') ?? '-';

/**
 * A person's own tokens: their personal admin tokens (for scripts and the CLI: issue with a name and an expiry of
 * at most 90 days, the secret shown once, revoke) and, on each team that lets its members keep their own, their
 * team tokens of it. An org role that reads people (people:read) also finds anyone's personal admin tokens by
 * subject here, and an org-admin (people:write) revokes them.
 */
export function MyTokensPage() {
  const me = useLoad(() => api<Me>('GET', '/admin/v1/me'), []);
  return (
    <section>
      <h1>My tokens</h1>
      <PersonalTokens subject={null} />
      {(me.data?.own_token_teams ?? []).length > 0 && <h2>Team tokens of your own</h2>}
      {(me.data?.own_token_teams ?? []).map((team) => (
        <Tokens key={team} team={team} canChange own />
      ))}
      {me.error && <p class="error">{me.error}</p>}
      {may('people:read') && <AnyonesTokens />}
    </section>
  );
}

/** Personal admin tokens: the person's own (`subject` null: /me/tokens), or someone's (/people/{subject}/tokens). */
function PersonalTokens({ subject }: { subject: string | null }) {
  const base =
    subject === null ? '/admin/v1/me/tokens' : `/admin/v1/people/${encodeURIComponent(subject)}/tokens`;
  const tokens = useLoad(() => api<{ data: AdminToken[] }>('GET', base), [base]);
  const [secret, setSecret] = useState<{ id: string; token: string } | null>(null);
  const [message, setMessage] = useState('');
  const canRevoke = subject === null || may('people:write');

  const issue = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    try {
      const days = Number(fields.get('days') || 0);
      const issued = await api<{ id: string; token: string }>('POST', base, {
        name: String(fields.get('name') ?? ''),
        ...(days ? { expiresInDays: days } : {}), // none: the server's default (30 days)
      });
      form.reset();
      setMessage('');
      setSecret({ id: issued.id, token: issued.token });
      tokens.reload();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  const revoke = async (id: string) => {
    if (!confirm(`Revoke personal admin token ${id}? It is refused at once.`)) return;
    await api('DELETE', `${base}/${encodeURIComponent(id)}`).catch((e: Error) => setMessage(e.message));
    tokens.reload();
  };

  return (
    <div>
      {subject === null ? <h2>Personal admin tokens</h2> : <h3>Personal admin tokens of {subject}</h3>}
      {subject === null && (
        <p class="muted">They act on the admin API with your roles (scripts, the CLI), never on models.</p>
      )}
      {secret && <SecretOnce id={secret.id} token={secret.token} onDone={() => setSecret(null)} />}
      {subject === null && (
        <form class="inline" onSubmit={issue} aria-label="Issue a personal admin token">
          <input
            name="name"
            required
            maxLength={128}
            placeholder="Token name"
            aria-label="Admin token name"
          />
          <input
            name="days"
            type="number"
            min="1"
            max={MAX_DAYS}
            placeholder="Expires in days (1-90, default 30)"
            aria-label="Expires in days (at most 90)"
          />
          <button type="submit">Issue admin token</button>
        </form>
      )}
      {message && <p class="error">{message}</p>}
      {tokens.error && <p class="error">{tokens.error}</p>}
      <DataTable
        testId={subject === null ? 'admin-tokens' : 'people-tokens'}
        columns={['Token', 'Name', 'Status', 'Created', 'Last used', 'Expires', '']}
        rows={tokens.data?.data}
        empty="No personal admin tokens."
        row={(t) => (
          <tr key={t.id} data-token={t.id}>
            <td>
              <code>{t.prefix}</code>
            </td>
            <td>{t.name}</td>
            <td>
              <span class={`badge ${t.status === 'active' ? 'on' : 'off'}`}>{t.status}</span>
            </td>
            <td class="nowrap">{day(t.createdAt)}</td>
            <td class="nowrap">{day(t.lastUsedAt)}</td>
            <td class="nowrap">{day(t.expiresAt)}</td>
            <td class="nowrap">
              {canRevoke && t.status === 'active' && (
                <button type="button" class="danger" onClick={() => revoke(t.id)}>
                  Revoke
                </button>
              )}
            </td>
          </tr>
        )}
      />
    </div>
  );
}

/** An org role's look-up of anyone's personal admin tokens, by their identity provider's subject. */
function AnyonesTokens() {
  const [subject, setSubject] = useState<string | null>(null);
  const find = (event: Event) => {
    event.preventDefault();
    const typed = String(new FormData(event.currentTarget as HTMLFormElement).get('subject') ?? '').trim();
    setSubject(typed || null);
  };
  return (
    <div>
      <h2>Anyone's personal admin tokens</h2>
      <form class="inline" onSubmit={find} aria-label="Find a person's admin tokens">
        <input
          name="subject"
          required
          placeholder="Subject (the ID token's sub)"
          aria-label="Person's subject"
        />
        <button type="submit">Show tokens</button>
      </form>
      {subject !== null && <PersonalTokens key={subject} subject={subject} />}
    </div>
  );
}
