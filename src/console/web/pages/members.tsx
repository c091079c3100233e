import { useState } from 'preact/hooks';
import { api } from '../api';
import { DataTable } from '../data-table';
import { useLoad } from '../use-load';

interface Member {
  subject: string;
  role: 'team-admin' | 'team-member';
  grantedAt: string;
  grantedBy: string;
}

/**
 * A team's granted memberships (people by their identity provider's subject): grant or change a role, revoke;
 * a list without those for who may only read them (`canChange` false). Roles a person has from the identity
 * provider's groups are not memberships and are not listed here.
 */
export function Members({ team, canChange }: { team: string; canChange: boolean }) {
  const path = `/admin/v1/teams/${encodeURIComponent(team)}/members`;
  const members = useLoad(() => api<{ data: Member[] }>('GET', path), [team]);
  const [message, setMessage] = useState('');
  const at = (subject: string) => `${path}/${encodeURIComponent(subject)}`;

  const grant = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    const subject = String(fields.get('subject') ?? '').trim();
    try {
      await api('PUT', at(subject), { role: String(fields.get('role')) });
      form.reset();
      setMessage(`${subject} granted.`);
      members.reload();
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  const revoke = async (subject: string) => {
    if (!confirm(`Take away ${subject}'s membership of ${team}?`)) return;
    setMessage('');
    await api('DELETE', at(subject)).catch((e: Error) => setMessage(e.message));
    members.reload();
  };

  return (
    <div>
      <h2>Members</h2>
      {canChange && (
        <form class="inline" onSubmit={grant} aria-label="Grant a membership">
          <input name="subject" required placeholder="Subject (the ID token's sub)" aria-label="Subject" />
          <select name="role" aria-label="Role">
            <option value="team-member">team-member</option>
            <option value="team-admin">team-admin</option>
          </select>
          <button type="submit">Grant</button>
        </form>
      )}
      {message && <p role="status">{message}</p>}
      {members.error && <p class="error">{members.error}</p>}
      <DataTable
        testId="members"
        columns={['Subject', 'Role', 'Granted', 'By', '']}
        rows={members.data?.data}
        empty="No memberships granted here."
        row={(m) => (
          <tr key={m.subject} data-member={m.subject}>
            <td>
              <code>{m.subject}</code>
            </td>
            <td>{m.role}</td>
            <td class="nowrap">{m.grantedAt.slice(0, 16).replace('T', ' ')}</td>
            <td>{m.grantedBy}</td>
            <td class="nowrap">
              {canChange && (
                <button type="button" class="danger" onClick={() => revoke(m.subject)}>
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
