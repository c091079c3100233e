import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';

const root = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const dashboard = JSON.parse(read('deploy/grafana/dashboards/switchyard.json'));
const compose = parse(read('docker-compose.yml'));

/** What the compose file, Prometheus config and Grafana provisioning promise each other. */
describe('the shipped monitoring stack', () => {
  it('every dashboard query uses the provisioned datasource and only metrics the gateway declares', async () => {
    const datasource = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')).datasources[0];
    expect(datasource).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
    const service = new MetricsService(buildConfig({ admin: { apiKey: 'k' } }, {}), new InFlightTracker());
    const declared = new Set((await service.registry.getMetricsAsJSON()).map((m) => m.name));
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(10);
    for (const panel of dashboard.panels) {
      expect(panel.datasource.uid).toBe(datasource.uid);
      expect(panel.description).toEqual(expect.any(String));
      expect(panel.targets.length).toBeGreaterThan(0);
      for (const target of panel.targets) {
        const used = [...target.expr.matchAll(/switchyard_[a-z_]+/g)].map((m) =>
          m[0].replace(/_(bucket|sum|count)$/, ''),
        );
        for (const name of used)
          expect({ panel: panel.title, name, declared: declared.has(name) }).toMatchObject({
            declared: true,
          });
      }
    }
  });

  it('the dashboard provider reads the folder compose mounts the dashboard into', () => {
    const provider = parse(read('deploy/grafana/provisioning/dashboards/switchyard.yml')).providers[0];
    const mounts: string[] = compose.services.grafana.volumes;
    expect(mounts).toContain(`./deploy/grafana/dashboards:${provider.options.path}:ro`);
    expect(mounts).toContain('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro');
  });

  it('Prometheus scrapes the gateway service on its port with the metrics token', () => {
    const job = parse(read('deploy/prometheus/prometheus.yml')).scrape_configs[0];
    expect(job.metrics_path).toBe('/metrics');
    expect(job.static_configs[0].targets).toEqual(['gateway:8080']);
    expect(compose.services.gateway.ports).toContain('8080:8080');
    expect(job.authorization).toMatchObject({
      type: 'Bearer',
      credentials_file: '/prometheus/metrics-token',
    });
    expect(compose.services.prometheus.entrypoint.join(' ')).toContain('> /prometheus/metrics-token');
    expect(compose.services.prometheus.environment.METRICS_TOKEN).toBe(
      compose.services.gateway.environment.SWITCHYARD_METRICS_TOKEN,
    );
    expect(parse(read('config/switchyard.yaml')).server.metricsToken).toBe('${SWITCHYARD_METRICS_TOKEN:-}');
  });
});

/** What `docker compose up` promises: the gateway answers as the quickstart's does, with whatever keys the host has. */
describe('the compose gateway', () => {
  const gateway = compose.services.gateway;
  const configText = read('config/switchyard.yaml');

  it('passes through every variable the shipped config reads, but the model paths (paths in the image)', () => {
    const variables = new Set([...configText.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]));
    expect(variables).toContain('ANTHROPIC_API_KEY');
    const imagePaths = ['SWITCHYARD_LOCAL_MODEL', 'SWITCHYARD_LOCAL_EMBEDDING_MODEL'];
    for (const name of variables)
      if (!imagePaths.includes(name)) expect(Object.keys(gateway.environment)).toContain(name);
    expect(gateway.environment.REDIS_URL).toBe('redis://redis:6379');
  });

  it('needs no admin key to start (the entrypoint generates one into the state volume) and no vendor key', () => {
    expect(gateway.environment.SWITCHYARD_ADMIN_KEY).toBe('${SWITCHYARD_ADMIN_KEY:-}');
    for (const [name, value] of Object.entries(gateway.environment))
      expect({ name, required: /:\?/.test(String(value)) }).toEqual({ name, required: false });
    const entrypoint = read('deploy/docker/entrypoint.sh');
    expect(entrypoint).toContain('key_file=/var/lib/switchyard/admin-key');
    expect(gateway.volumes).toContain('switchyard-state:/var/lib/switchyard');
  });

  it('reaches Ollama on the Docker host, and mounts a config file of the user over the shipped one', () => {
    expect(gateway.extra_hosts).toContain('host.docker.internal:host-gateway');
    expect(gateway.environment.OLLAMA_URL).toContain('host.docker.internal');
    expect(gateway.volumes).toContain(
      '${SWITCHYARD_CONFIG_FILE:-./config/switchyard.yaml}:/app/config/switchyard.yaml:ro',
    );
  });
});
