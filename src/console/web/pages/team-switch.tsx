import { useState } from 'preact/hooks';
import { api } from '../api';

/** What a team setting that is on or off says, and its button's label, in each state. */
export interface SwitchWording {
  on: string;
  off: string;
  turnOff: string;
  turnOn: string;
}

/**
 * A boolean team setting (one field of PATCH /admin/v1/teams/{team}): a sentence saying its state and, for who may
 * change the team (teams:adjust: an org-admin, the team's team-admin), the button that flips it.
 */
export function TeamSwitch({
  team,
  field,
  on,
  canChange,
  onSaved,
  wording,
  testId,
}: {
  team: string;
  field: 'selfServiceTokens' | 'responseCache';
  on: boolean;
  canChange: boolean;
  onSaved: () => void;
  wording: SwitchWording;
  testId: string;
}) {
  const [error, setError] = useState('');
  const turn = async (value: boolean) => {
    setError('');
    await api('PATCH', `/admin/v1/teams/${encodeURIComponent(team)}`, { [field]: value }).then(
      onSaved,
      (e: Error) => setError(e.message),
    );
  };
  return (
    <p data-testid={testId}>
      {on ? wording.on : wording.off}{' '}
      {canChange && (
        <button type="button" onClick={() => turn(!on)}>
          {on ? wording.turnOff : wording.turnOn}
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
