import { useState } from 'preact/hooks';
import { api, type Session } from '../api';

/** The admin key is sent once, exchanged for a session cookie, and dropped: it is never stored in the browser. */
export function SignInPage({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [error, setError] = useState('');
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
  return (
    <form class="sign-in" onSubmit={submit}>
      <h1>Switchyard console</h1>
      <label>
        Your name (for the audit trail)
        <input name="name" required maxLength={64} pattern="[\w.@ \-]{1,64}" autoComplete="username" />
      </label>
      <label>
        Admin key
        <input name="adminKey" type="password" required autoComplete="current-password" />
      </label>
      <button type="submit">Sign in</button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
