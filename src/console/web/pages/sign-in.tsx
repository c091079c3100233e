import { useEffect, useState } from 'preact/hooks';
import { api, type Session, type SignInOptions } from '../api';

/**
 * The sign-in: through the organisation's identity provider (a link, not a form: the provider's page takes over,
 * and comes back to the page the person was on), and the admin key, sent once, exchanged for a session cookie
 * and dropped (never stored in the browser), unless console.adminKeySignIn turned it off.
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [error, setError] = useState('');
  const [options, setOptions] = useState<SignInOptions | null>(null);
  useEffect(() => {
    api<SignInOptions>('GET', '/console/api/session/options').then(setOptions, (e: Error) =>
      setError(e.message),
    );
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    try {
      const session = await api<Session>('POST', '/console/api/session', {
        adminKey: fields.get('adminKey'),
        name: fields.get('name'),
      });
      form.reset();
      onSignedIn(session);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const ssoStart = `/console/api/sso/start?${new URLSearchParams({ return: `/console/${location.hash}` })}`;
  return (
    <div class="sign-in">
      <h1>Switchyard console</h1>
      {options?.sso && (
        <a class="button primary" href={ssoStart}>
          Sign in with SSO
        </a>
      )}
      {options?.admin_key && (
        <form class="sign-in-key" onSubmit={submit}>
          {options.sso && <p class="note">Or, break-glass, with the admin key:</p>}
          <label>
            Your name (for the audit trail)
            <input name="name" required maxLength={64} pattern="[\w.@ \-]{1,64}" autoComplete="username" />
          </label>
          <label>
            Admin key
            <input name="adminKey" type="password" required autoComplete="current-password" />
          </label>
          <button type="submit">Sign in</button>
        </form>
      )}
      {options && !options.sso && !options.admin_key && (
        <p class="error">No way to sign in is configured (auth.oidc, console.adminKeySignIn).</p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
