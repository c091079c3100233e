import { api } from '../api';
import { useLoad } from '../use-load';

interface McpServer {
  id: string;
  kind: 'remote' | 'local';
  url: string | null;
  command: string | null;
  timeout_ms: number;
  status: 'up' | 'down';
  last_error: string | null;
  /** While the gateway skips it after a failure: when it is next tried (ISO time); else null. */
  retry_at: string | null;
  tools: Array<{ name: string; description: string | null }> | null;
}

interface TeamWithMcp {
  id: string;
  mcp: { servers: string[]; tools: string[] };
}

/**
 * The MCP servers the gateway fronts (docs/mcp.md): each one's health and tools as this replica sees them now, and
 * which servers and tools each team may reach through /mcp.
 */
export function McpPage() {
  const servers = useLoad(() => api<{ data: McpServer[] }>('GET', '/admin/v1/mcp/servers'), []);
  const teams = useLoad(() => api<{ data: TeamWithMcp[] }>('GET', '/admin/v1/teams'), []);
  if (servers.error) return <p class="error">{servers.error}</p>;
  return (
    <section>
      <h1>MCP servers</h1>
      <p class="muted">
        Each server is asked for its tools now, by this replica; teams reach them through /mcp as{' '}
        <code>{'<server>__<tool>'}</code>.{' '}
        <button type="button" onClick={servers.reload}>
          Refresh
        </button>
      </p>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th>Server</th>
              <th>Where</th>
              <th>Status</th>
              <th>Tools</th>
            </tr>
          </thead>
          <tbody>
            {(servers.data?.data ?? []).map((server) => (
              <tr key={server.id} data-testid={`mcp-server-${server.id}`}>
                <td>{server.id}</td>
                <td class="wrap">
                  {server.kind}: {server.url ?? server.command}
                </td>
                <td class="wrap status">
                  <span class={`badge ${server.status === 'up' ? 'on' : 'off'}`}>{server.status}</span>{' '}
                  {server.last_error && <span class="muted">{server.last_error}</span>}
                  {server.retry_at && (
                    <span class="muted" data-testid="mcp-retry-at">
                      {' '}
                      Skipped until {new Date(server.retry_at).toLocaleTimeString()}.
                    </span>
                  )}
                </td>
                <td class="wrap">
                  {server.tools === null
                    ? '-'
                    : server.tools.map((tool) => (
                        <div key={tool.name} title={tool.description ?? undefined}>
                          {tool.name}
                        </div>
                      ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Team permissions</h2>
      {teams.error ? (
        <p class="error">{teams.error}</p>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th>Team</th>
                <th>Servers</th>
                <th>Tools (globs)</th>
              </tr>
            </thead>
            <tbody>
              {(teams.data?.data ?? [])
                .filter((team) => team.mcp.servers.length > 0)
                .map((team) => (
                  <tr key={team.id} data-testid={`mcp-team-${team.id}`}>
                    <td>
                      <a href={`#/teams/${encodeURIComponent(team.id)}`}>{team.id}</a>
                    </td>
                    <td class="wrap">{team.mcp.servers.join(', ')}</td>
                    <td class="wrap">{team.mcp.tools.join(', ')}</td>
                  </tr>
                ))}
            </tbody>
          </table>
          <p class="muted">Teams not listed reach no MCP server.</p>
        </div>
      )}
    </section>
  );
}
