// Validates a ServiceMonitor against the Prometheus Operator's own CRD schema (the schema that
// @kubernetes-models/prometheus-operator generates its validator from). ESM-only, so it runs as its own process.
//   node validate-servicemonitor.mjs <file.yaml>   -> exit 0 and "valid", or exit 1 and the errors
import { readFileSync } from 'node:fs';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { parse } from 'yaml';

try {
  new ServiceMonitor(parse(readFileSync(process.argv[2], 'utf8'))).validate();
  process.stdout.write('valid');
} catch (error) {
  process.stdout.write(String(error instanceof Error ? error.message : error));
  process.exit(1);
}
