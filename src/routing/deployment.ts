import type { Backend } from '../providers/provider-adapter';

/** One deployment of a model: where it runs, under which name, and its share of the traffic. */
export interface Deployment {
  /** `<backend>/<upstreamModel>`: names the deployment in headers, records, metrics and circuits. */
  id: string;
  backend: Backend;
  upstreamModel: string;
  weight: number;
  priority: number;
}
