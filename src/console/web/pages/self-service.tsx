import { useState } from 'preact/hooks';
import { api } from '../api';

/**
 * Whether the team lets its members keep team tokens of their own (the team's `selfServiceTokens`), and for who
 * may change it (teams:adjust: an org-admin, the team's team-admin) the button that turns it on or off.
 */
export function SelfServiceTokens({
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
    await api('PATCH', `/admin/v1/teams/${encodeURIComponent(team)}`, { selfServiceTokens: value }).then(
      onSaved,
      (e: Error) => setError(e.message),
    );
  };
  return (
    <p data-testid="self-service">
      {on
        ? 'Members may issue, rotate and revoke team tokens of their own (on their My tokens page).'
        : 'Members may not keep team tokens of their own.'}{' '}
      {canChange && (
        <button type="button" onClick={() => turn(!on)}>
          {on ? 'Stop member tokens' : 'Allow member tokens'}
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
