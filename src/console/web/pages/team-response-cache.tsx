import { useState } from 'preact/hooks';
import { api } from '../api';

/**
 * Whether a team's requests use the response cache of models that have one (docs/response-cache.md), and for who
 * may change the team, a button that turns it off or back on.
 */
export function TeamResponseCache({
  team,
  on,
  canChange,
  onSaved,
}: {
  team: string;
  on: boolean;
  canChange: boolean;
  onSaved: () => void;
}) {
  const [error, setError] = useState('');
  const turn = async (value: boolean) => {
    setError('');
    await api('PATCH', `/admin/v1/teams/${encodeURIComponent(team)}`, { responseCache: value }).then(
      onSaved,
      (e: Error) => setError(e.message),
    );
  };
  return (
    <p data-testid="team-response-cache">
      {on
        ? 'Models with a response cache answer repeated requests of this team from it.'
        : 'This team never uses the response cache.'}{' '}
      {canChange && (
        <button type="button" onClick={() => turn(!on)}>
          {on ? 'Opt out of the response cache' : 'Use the response cache'}
        </button>
      )}
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </p>
  );
}
