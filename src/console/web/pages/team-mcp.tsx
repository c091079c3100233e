import { useState } from 'preact/hooks';
import { api } from '../api';
import { mcpChange, serverChoices, type TeamMcp } from '../mcp-form';
import { useLoad } from '../use-load';

/**
 * Which MCP servers and tools a team's tokens reach through /mcp (docs/mcp.md), for whoever reads the team's
 * settings; an org-admin (teams:write) also edits them. A team-admin cannot: the servers run with the gateway's
 * credentials, and the admin API refuses them the change.
 */
export function TeamMcpPermissions({
  team,
  mcp,
  canChange,
  onSaved,
}: {
  team: string;
  mcp: TeamMcp;
  canChange: boolean;
  onSaved: () => void;
}) {
  // The form, and its read of the servers (which asks each one for its tools), only once it is opened.
  const [open, setOpen] = useState(false);
  return (
    <div data-testid="team-mcp">
      <h3>MCP tools</h3>
      {mcp.servers.length === 0 ? (
        <p class="muted">This team reaches no MCP server.</p>
      ) : (
        <ul class="limits">
          <li>
            <span class="limit-name">Servers</span>{' '}
            <span data-testid="team-mcp-servers">{mcp.servers.join(', ')}</span>
          </li>
          <li>
            <span class="limit-name">Tools</span>{' '}
            <span data-testid="team-mcp-tools">{mcp.tools.length ? mcp.tools.join(', ') : 'none'}</span>
          </li>
        </ul>
      )}
      {canChange && (
        <details class="create" onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
          <summary>Edit MCP permissions</summary>
          {open && <EditTeamMcp team={team} mcp={mcp} onSaved={onSaved} />}
        </details>
      )}
    </div>
  );
}

/** The org-admin's form: a box per configured server, the tool globs, and Save (PATCH .../teams/{team} `mcp`). */
function EditTeamMcp({ team, mcp, onSaved }: { team: string; mcp: TeamMcp; onSaved: () => void }) {
  const servers = useLoad(() => api<{ data: Array<{ id: string }> }>('GET', '/admin/v1/mcp/servers'), []);
  const [message, setMessage] = useState<{ text: string; refused?: boolean } | null>(null);
  if (servers.error) return <p class="error">{servers.error}</p>;
  if (!servers.data) return <p class="loading">Loading servers…</p>;
  const choices = serverChoices(
    servers.data.data.map((server) => server.id),
    mcp,
  );
  const submit = async (event: Event) => {
    event.preventDefault();
    const fields = new FormData(event.currentTarget as HTMLFormElement);
    const ticked = choices.map((c) => c.id).filter((id) => fields.getAll('servers').includes(id));
    const change = mcpChange(mcp, ticked, String(fields.get('tools') ?? ''));
    if (!change) return setMessage({ text: 'Nothing changed.' });
    try {
      await api('PATCH', `/admin/v1/teams/${encodeURIComponent(team)}`, { mcp: change });
      setMessage({ text: change.servers.length ? 'MCP permissions saved.' : 'MCP access removed.' });
      onSaved();
    } catch (e) {
      // The API's own message: it names the unknown server or the glob that matches nothing, and why.
      setMessage({ text: (e as Error).message, refused: true });
    }
  };
  return (
    <>
      {/* Keyed by the permissions as saved: a reload that changed them fills the form again. */}
      <form key={JSON.stringify(mcp)} onSubmit={submit} onInput={() => setMessage(null)}>
        <fieldset class="wide" aria-label="MCP servers">
          <legend>Servers (none: no MCP access)</legend>
          {choices.length === 0 && <span class="muted">No MCP server is configured.</span>}
          {choices.map(({ id, configured }) => (
            <label key={id} class="check">
              <input type="checkbox" name="servers" value={id} defaultChecked={mcp.servers.includes(id)} />{' '}
              {id}
              {!configured && <span class="muted"> (not configured)</span>}
            </label>
          ))}
        </fieldset>
        <label class="wide">
          Tool globs over {'<server>__<tool>'} (comma-separated; * for every tool, empty for none){' '}
          <input name="tools" aria-label="Tool globs" defaultValue={mcp.tools.join(', ')} />
        </label>
        <button type="submit">Save MCP permissions</button>
      </form>
      {message?.refused && (
        <p class="error" role="alert" data-testid="team-mcp-error">
          {message.text}
        </p>
      )}
      {message && !message.refused && <p role="status">{message.text}</p>}
    </>
  );
}
