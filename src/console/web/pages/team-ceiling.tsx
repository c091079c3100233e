import { useState } from 'preact/hooks';
import { api } from '../api';
import { LIMIT_NAMES } from '../../../core/limit-catalogue';
import { formatLimitValue, limitLabel } from '../format';
import { LIMIT_FIELDS, limitChanges, listOf, type Limits } from '../limits-form';

/** A team's ceiling as the admin API shows it (null: none). */
export type Ceiling = { models?: string[]; limits?: Limits } | null;

/**
 * The ceiling an org-admin set: the most a team-admin may give the team. Where it (or a part of it) is missing,
 * the team's current values are the bound. Shown to whoever may read the team's settings.
 */
export function CeilingView({ ceiling, currency }: { ceiling: Ceiling; currency: string }) {
  return (
    <div data-testid="ceiling">
      <h3>Ceiling</h3>
      {ceiling === null ? (
        <p class="muted">
          No ceiling: a team-admin may narrow the models and lower or add limits, not go above today's.
        </p>
      ) : (
        <ul class="limits">
          <li>
            <span class="limit-name">Models</span>{' '}
            <span>{ceiling.models ? ceiling.models.join(', ') : 'the current ones (no bound set)'}</span>
          </li>
          {ceiling.limits ? (
            LIMIT_NAMES.filter((name) => ceiling.limits![name] !== undefined).map((name) => (
              <li key={name} data-limit={name}>
                <span class="limit-name">{limitLabel(name)}</span>{' '}
                <span>{formatLimitValue(name, ceiling.limits![name]!, currency)}</span>
              </li>
            ))
          ) : (
            <li>
              <span class="limit-name">Limits</span> <span>the current ones (no bound set)</span>
            </li>
          )}
        </ul>
      )}
    </div>
  );
}

/**
 * The org-admin's ceiling form. It sends what was changed as the admin API's patch of the ceiling: its models when
 * they differ (emptied: `null`, no bound), and only the limits changed (emptied: `null`, that bound dropped). Values
 * of the team above a lowered ceiling are lowered with it by the gateway, in the same write.
 */
export function EditCeiling({
  team,
  ceiling,
  onSaved,
}: {
  team: string;
  ceiling: Ceiling;
  onSaved: () => void;
}) {
  const [message, setMessage] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const fields = new FormData(event.currentTarget as HTMLFormElement);
    try {
      const changes: { models?: string[] | null; limits?: Record<string, number | null> } = {};
      const models = listOf(fields.get('models')) ?? null;
      if ((models ?? []).join('\n') !== (ceiling?.models ?? []).join('\n')) changes.models = models;
      const limits = limitChanges(fields, ceiling?.limits ?? {});
      if (limits) changes.limits = limits;
      if (Object.keys(changes).length === 0) return setMessage('Nothing changed.');
      await api('PATCH', `/admin/v1/teams/${encodeURIComponent(team)}`, { ceiling: changes });
      setMessage('Ceiling saved.');
      onSaved();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  return (
    <details class="create">
      <summary>Edit ceiling</summary>
      <p class="muted note">
        The most a team-admin may give this team. An empty field sets no bound there (the team's current value
        bounds a team-admin instead). Lowering the ceiling lowers the team's models and limits with it.
      </p>
      <form key={JSON.stringify(ceiling)} onSubmit={submit} onInput={() => setMessage('')}>
        <label>
          Ceiling models (comma-separated){' '}
          <input name="models" defaultValue={(ceiling?.models ?? []).join(', ')} />
        </label>
        {LIMIT_FIELDS.map(([key, label]) => (
          <label key={key}>
            Ceiling: {label}{' '}
            <input
              name={key}
              type="number"
              min="0"
              step="any"
              defaultValue={ceiling?.limits?.[key] === undefined ? '' : String(ceiling.limits[key])}
            />
          </label>
        ))}
        <button type="submit">Save ceiling</button>
      </form>
      {message && <p role="status">{message}</p>}
    </details>
  );
}
