import { buildConfig as buildWith, loadConfig as loadWith } from '../../src/config/config.loader';
import type { GatewayConfig } from '../../src/config/config.schema';
import { FAMILIES } from '../../src/providers/families';

/** The gateway's config as its entry points build it: with every backend family the providers registry lists. */
export function buildConfig(raw: unknown, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return buildWith(raw, FAMILIES, env);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadWith(FAMILIES, env);
}
