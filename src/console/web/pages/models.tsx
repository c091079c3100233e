import { api } from '../api';
import { useLoad } from '../use-load';

interface Deployment {
  model: string;
  deployment: string;
  backend: string;
  upstream_model: string;
  weight: number;
  priority: number;
  in_flight: number | null;
  circuit: {
    state: string;
    consecutiveFailures: number;
    lastError: string | null;
    lastErrorAt: string | null;
  };
  /** Why the deployment is skipped (no key, unreachable, cannot load, circuit open), or null. */
  down: string | null;
  model_listed: boolean;
  /** Why /v1/models does not list the model (all its deployments are down), or null. */
  model_hidden_because: string | null;
}

/**
 * Every configured model's deployments and their health on the replica answering: up or down and why, whether
 * /v1/models lists the model and why not, the circuit and its last error.
 */
export function ModelsPage() {
  const { data, error, reload } = useLoad(
    () => api<{ data: Deployment[] }>('GET', '/admin/v1/deployments'),
    [],
  );
  if (error) return <p class="error">{error}</p>;
  return (
    <section>
      <h1>Models and deployments</h1>
      <p class="muted">
        Health is this replica's view (circuits are per replica).{' '}
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </p>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th>Model</th>
              <th title="A deployment is named backend/upstream model">Deployment</th>
              <th>Weight</th>
              <th>Priority</th>
              <th>In flight</th>
              <th>Status</th>
              <th>Circuit</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {(data?.data ?? []).map((d) => (
              // Two models can route to one deployment (an alias): the row is the pair.
              <tr key={`${d.model}:${d.deployment}`}>
                <td>{d.model}</td>
                <td>{d.deployment}</td>
                <td class="num">{d.weight}</td>
                <td class="num">{d.priority}</td>
                <td class="num">{d.in_flight ?? '-'}</td>
                <td class="wrap status" data-testid={`status-${d.model}:${d.deployment}`}>
                  {d.down ? <span class="badge off">down</span> : <span class="badge on">up</span>} {d.down}
                  {/* Why it is hidden is its deployments' reasons, each already on its own row: said in full on hover. */}
                  {!d.model_listed && (
                    <div class="muted" title={d.model_hidden_because ?? undefined}>
                      {d.model} is not listed in /v1/models: no deployment of it is up
                    </div>
                  )}
                </td>
                <td>
                  <span class={`badge ${d.circuit.state === 'closed' ? 'on' : 'off'}`}>
                    {d.circuit.state}
                  </span>
                </td>
                <td class="muted wrap">
                  {d.circuit.lastError
                    ? `${d.circuit.lastErrorAt?.slice(0, 19).replace('T', ' ')}: ${d.circuit.lastError}`
                    : '-'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
