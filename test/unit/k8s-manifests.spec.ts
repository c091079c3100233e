import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildConfig } from '../support/config';
import { ensureKubernetesValidate } from '../support/kubernetes-validate';

const root = join(__dirname, '../..');
const read = (file: string) => parse(readFileSync(join(root, 'deploy/k8s', file), 'utf8'));

/** The Kubernetes manifests (deploy/k8s): valid against the Kubernetes schemas, and consistent with the gateway. */
describe('Kubernetes manifests', () => {
  jest.setTimeout(600_000);
  const kustomization = read('kustomization.yaml');
  const deployment = read('deployment.yaml');
  const container = deployment.spec.template.spec.containers[0];
  const configMap = read('configmap.yaml');
  const config = buildConfig(parse(configMap.data['switchyard.yaml']), {
    SWITCHYARD_ADMIN_KEY: 'k',
    REDIS_URL: 'redis://redis:6379',
  });

  it('every core resource passes kubernetes-validate --strict (Kubernetes 1.37 schemas)', () => {
    const validate = ensureKubernetesValidate();
    const files = [
      ...kustomization.resources.filter((file: string) => file !== 'servicemonitor.yaml'),
      'secret.example.yaml',
    ];
    const output = execFileSync(
      validate,
      ['--strict', ...files.map((file: string) => join(root, 'deploy/k8s', file))],
      { encoding: 'utf8' },
    );
    expect(output.match(/passed/g)).toHaveLength(files.length);
  });

  it("the ServiceMonitor passes the Prometheus Operator's CRD schema and scrapes the Service's port with the metrics token", () => {
    const file = join(root, 'deploy/k8s/servicemonitor.yaml');
    expect(
      execFileSync(process.execPath, [join(__dirname, '../support/validate-servicemonitor.mjs'), file], {
        encoding: 'utf8',
      }),
    ).toBe('valid');
    const monitor = read('servicemonitor.yaml');
    const service = read('service.yaml');
    expect(monitor.spec.selector.matchLabels).toEqual(service.metadata.labels);
    expect(service.spec.ports.map((p: { name: string }) => p.name)).toContain(monitor.spec.endpoints[0].port);
    expect(monitor.spec.endpoints[0].authorization.credentials).toEqual({
      name: 'switchyard-secrets',
      key: 'SWITCHYARD_METRICS_TOKEN',
    });
  });

  it('the pod drains within its grace period: preStop pause + server.shutdownGraceMs fit terminationGracePeriodSeconds', () => {
    const pause = container.lifecycle.preStop.sleep.seconds;
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
      pause + config.server.shutdownGraceMs / 1000 + 1,
    );
    expect(container.livenessProbe.httpGet.path).toBe('/health/live');
    expect(container.readinessProbe.httpGet.path).toBe('/health/ready');
    expect(container.resources.requests).toMatchObject({
      cpu: expect.any(String),
      memory: expect.any(String),
    });
  });

  it('the config is a valid gateway config, its secrets come from the Secret, and the Service, PDB and HPA point at the pods', () => {
    expect(config.redis.url).toBe('redis://redis:6379');
    expect(configMap.data['switchyard.yaml']).not.toMatch(/sk-|apiKey: "[^$]/);
    expect(container.envFrom[0].secretRef.name).toBe(read('secret.example.yaml').metadata.name);
    expect(container.volumeMounts[0].mountPath).toBe('/etc/switchyard');
    expect(container.env).toContainEqual({
      name: 'SWITCHYARD_CONFIG',
      value: '/etc/switchyard/switchyard.yaml',
    });
    const pods = deployment.spec.template.metadata.labels;
    expect(read('service.yaml').spec.selector).toEqual(pods);
    expect(read('pdb.yaml').spec.selector.matchLabels).toEqual(pods);
    expect(read('hpa.yaml').spec.scaleTargetRef).toMatchObject({
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    expect(read('hpa.yaml').spec.minReplicas).toBeGreaterThan(read('pdb.yaml').spec.minAvailable);
    expect(container.ports[0].containerPort).toBe(config.server.port);
  });
});
