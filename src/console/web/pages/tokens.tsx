import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { SecretOnce } from '../secret-once';
import { useLoad } from '../use-load';

interface Token {
  id: string;
  name: string | null;
  prefix: string;
  status: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  /** Whose it is (a member's own token), or null: the team's. */
  owner: { subject: string; email?: string } | null;
}

/**
 * A team's tokens: issue (the secret shown once, with a copy button), revoke, rotate with a grace period; a list
 * without those for who may only read them (`canChange` false). The team's list shows each token's owner; `own`
 * is the person's own tokens of the team instead (/admin/v1/me/teams/{team}/tokens: tokens:own).
 */
export function Tokens({
  team,
  canChange,
  own = false,
}: {
  team: string;
  canChange: boolean;
  own?: boolean;
}) {
  const base = own
    ? `/admin/v1/me/teams/${encodeURIComponent(team)}/tokens`
    : `/admin/v1/teams/${encodeURIComponent(team)}/tokens`;
  const tokenPath = (id: string) =>
    own ? `${base}/${encodeURIComponent(id)}` : `/admin/v1/tokens/${encodeURIComponent(id)}`;
  const tokens = useLoad(() => api<{ data: Token[] }>('GET', base), [base]);
  const [secret, setSecret] = useState<{ id: string; token: string } | null>(null);
  const [message, setMessage] = useState('');
  /** The token whose rotation is being asked about (its dialog is open). */
  const [rotating, setRotating] = useState<string | null>(null);

  const issue = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    const days = Number(fields.get('days') || 0);
    try {
      const issued = await api<{ id: string; token: string }>('POST', base, {
        name: String(fields.get('name') || '') || undefined,
        ...(days ? { expiresInSeconds: days * 86_400 } : {}),
      });
      form.reset();
      setSecret({ id: issued.id, token: issued.token });
      tokens.reload();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  const revoke = async (id: string) => {
    if (!confirm(`Revoke token ${id}? Clients using it are refused at once.`)) return;
    await api('DELETE', tokenPath(id)).catch((e: Error) => setMessage(e.message));
    tokens.reload();
  };
  const rotate = async (id: string, gracePeriodSeconds: number) => {
    const rotated = await api<{ id: string; token: string }>('POST', `${tokenPath(id)}/rotate`, {
      gracePeriodSeconds,
    });
    setRotating(null);
    setSecret({ id: rotated.id, token: rotated.token });
    tokens.reload();
  };

  return (
    <div>
      {own ? <h3>Your tokens of {team}</h3> : <h2>Tokens</h2>}
      {secret && <SecretOnce id={secret.id} token={secret.token} onDone={() => setSecret(null)} />}
      {canChange && (
        <form class="inline" onSubmit={issue}>
          <input name="name" placeholder="Token name" maxLength={128} aria-label="Token name" />
          <input
            name="days"
            type="number"
            min="0"
            placeholder="Expires in days (optional)"
            aria-label="Expires in days"
          />
          <button type="submit">Issue token</button>
        </form>
      )}
      {message && <p class="error">{message}</p>}
      {rotating && (
        <RotateDialog
          token={rotating}
          onRotate={(grace) => rotate(rotating, grace)}
          onCancel={() => setRotating(null)}
        />
      )}
      <div class="scroll">
        <table data-testid={own ? `own-tokens-${team}` : 'tokens'}>
          <thead>
            <tr>
              <th>Token</th>
              <th>Name</th>
              {!own && <th>Owner</th>}
              <th>Status</th>
              <th>Created</th>
              <th>Last used</th>
              <th>Expires</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {tokens.data?.data.length === 0 && (
              <tr>
                <td colSpan={own ? 7 : 8} class="muted">
                  No tokens yet.
                </td>
              </tr>
            )}
            {(tokens.data?.data ?? []).map((t) => (
              <tr key={t.id} data-token={t.id}>
                <td>
                  <code>{t.prefix}</code>
                </td>
                <td>{t.name ?? ''}</td>
                {!own && (
                  <td data-testid="token-owner" title={t.owner?.subject}>
                    {t.owner ? (t.owner.email ?? t.owner.subject) : <span class="muted">team</span>}
                  </td>
                )}
                <td>
                  <span class={`badge ${t.status === 'active' ? 'on' : 'off'}`}>{t.status}</span>
                </td>
                <td class="nowrap">{t.createdAt.slice(0, 16).replace('T', ' ')}</td>
                <td class="nowrap">{t.lastUsedAt?.slice(0, 16).replace('T', ' ') ?? '-'}</td>
                <td class="nowrap">{t.expiresAt?.slice(0, 16).replace('T', ' ') ?? '-'}</td>
                <td class="nowrap">
                  {canChange && t.status === 'active' && (
                    <>
                      <button type="button" onClick={() => setRotating(t.id)}>
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
    </div>
  );
}

/**
 * Rotation asks one thing, in the page (a modal <dialog>, not the browser's prompt()): how long the old secret
 * keeps working, so clients can move to the new one without an outage.
 */
function RotateDialog({
  token,
  onRotate,
  onCancel,
}: {
  token: string;
  onRotate: (graceSeconds: number) => Promise<void>;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const grace = Number(new FormData(event.currentTarget as HTMLFormElement).get('grace'));
    try {
      await onRotate(grace);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="rotate-title" onCancel={onCancel}>
      <form onSubmit={submit}>
        <h3 id="rotate-title">Rotate token {token}</h3>
        <p class="muted">
          A new secret is issued and shown once. The old one keeps working for the grace period, then stops.
        </p>
        <label>
          Grace period (seconds)
          <input name="grace" type="number" min="0" max="2592000" step="1" required defaultValue="3600" />
        </label>
        <p class="muted">0 stops the old secret at once; 3600 is an hour, 86400 a day.</p>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <div class="dialog-actions">
          <button type="submit">Rotate</button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
