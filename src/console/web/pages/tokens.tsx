import { useState } from 'preact/hooks';
import { api } from '../api';
import { useLoad } from '../use-load';

interface Token {
  id: string;
  name: string | null;
  prefix: string;
  status: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

/** A team's tokens: issue (the secret shown once, with a copy button), revoke, rotate with a grace period. */
export function Tokens({ team }: { team: string }) {
  const tokens = useLoad(() => api<{ data: Token[] }>('GET', `/admin/v1/teams/${encodeURIComponent(team)}/tokens`), [team]);
  const [secret, setSecret] = useState<{ id: string; token: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const [message, setMessage] = useState('');

  const issue = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    const days = Number(fields.get('days') || 0);
    try {
      const issued = await api<{ id: string; token: string }>('POST', `/admin/v1/teams/${encodeURIComponent(team)}/tokens`, { name: String(fields.get('name') || '') || undefined, ...(days ? { expiresInSeconds: days * 86_400 } : {}) });
      form.reset();
      setSecret({ id: issued.id, token: issued.token });
      setCopied(false);
      tokens.reload();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  const revoke = async (id: string) => {
    if (!confirm(`Revoke token ${id}? Clients using it are refused at once.`)) return;
    await api('DELETE', `/admin/v1/tokens/${id}`).catch((e: Error) => setMessage(e.message));
    tokens.reload();
  };
  const rotate = async (id: string) => {
    const grace = prompt('Grace period in seconds (the old secret keeps working this long):', '3600');
    if (grace === null) return;
    try {
      const rotated = await api<{ id: string; token: string }>('POST', `/admin/v1/tokens/${id}/rotate`, { gracePeriodSeconds: Number(grace) || 0 });
      setSecret({ id: rotated.id, token: rotated.token });
      setCopied(false);
      tokens.reload();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  const copy = async () => {
    await navigator.clipboard.writeText(secret!.token);
    setCopied(true);
  };

  return (
    <div>
      <h2>Tokens</h2>
      {secret && (
        <div class="secret" role="alert">
          <p>The secret of {secret.id}: copy it now, it is never shown again.</p>
          <code data-testid="token-secret">{secret.token}</code>
          <button type="button" onClick={copy}>
            {copied ? 'Copied' : 'Copy'}
          </button>
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      )}
      <form class="inline" onSubmit={issue}>
        <input name="name" placeholder="Token name" maxLength={128} aria-label="Token name" />
        <input name="days" type="number" min="0" placeholder="Expires in days (optional)" aria-label="Expires in days" />
        <button type="submit">Issue token</button>
      </form>
      {message && <p class="error">{message}</p>}
      <table data-testid="tokens">
        <thead>
          <tr>
            <th>Token</th>
            <th>Name</th>
            <th>Status</th>
            <th>Created</th>
            <th>Last used</th>
            <th>Expires</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(tokens.data?.data ?? []).map((t) => (
            <tr key={t.id} data-token={t.id}>
              <td>
                <code>{t.prefix}</code>
              </td>
              <td>{t.name ?? ''}</td>
              <td>
                <span class={`badge ${t.status === 'active' ? 'on' : 'off'}`}>{t.status}</span>
              </td>
              <td>{t.createdAt.slice(0, 16).replace('T', ' ')}</td>
              <td>{t.lastUsedAt?.slice(0, 16).replace('T', ' ') ?? '-'}</td>
              <td>{t.expiresAt?.slice(0, 16).replace('T', ' ') ?? '-'}</td>
              <td>
                {t.status === 'active' && (
                  <>
                    <button type="button" onClick={() => rotate(t.id)}>
                      Rotate
                    </button>
                    <button type="button" class="danger" onClick={() => revoke(t.id)}>
                      Revoke
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
