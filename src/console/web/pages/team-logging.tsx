import { useState } from 'preact/hooks';
import { api } from '../api';

/** A team's request-log setting: `content: null` follows the organisation's (logging.requests.content). */
export type ContentSetting = 'none' | 'full' | null;

const SAYS: Record<'none' | 'full' | 'default', string> = {
  full: 'The request log keeps what this team sends and gets back (redacted), beside each request.',
  none: "The request log keeps this team's requests without their content.",
  default: "The request log follows the organisation's setting for this team's content.",
};

/**
 * What the request log keeps of a team's requests (docs/request-log.md, content), and for who may change the
 * team, a choice: keep content, keep none, or follow the organisation.
 */
export function TeamLogging({
  team,
  content,
  canChange,
  onSaved,
}: {
  team: string;
  content: ContentSetting;
  canChange: boolean;
  onSaved: () => void;
}) {
  const [error, setError] = useState('');
  const set = async (value: ContentSetting) => {
    setError('');
    await api('PATCH', `/admin/v1/teams/${encodeURIComponent(team)}`, { logging: { content: value } }).then(
      onSaved,
      (e: Error) => setError(e.message),
    );
  };
  return (
    <p data-testid="team-logging">
      {SAYS[content ?? 'default']}{' '}
      {canChange && (
        <label>
          Content{' '}
          <select
            aria-label="Request log content"
            value={content ?? 'default'}
            onChange={(e) => {
              const value = (e.target as HTMLSelectElement).value;
              void set(value === 'default' ? null : (value as 'none' | 'full'));
            }}
          >
            <option value="default">organisation's default</option>
            <option value="none">keep none</option>
            <option value="full">keep content (redacted)</option>
          </select>
        </label>
      )}
      {error && (
        <span class="error" role="alert">
          {error}
        </span>
      )}
    </p>
  );
}
