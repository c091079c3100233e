import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Injectable } from '@nestjs/common';
import { GatewayConfig, type PriceConfig } from '../config/config.schema';

/** A price per million tokens (in the billing currency): equal to micro-units of currency per token. */
export interface Price {
  input: number;
  output: number;
  cachedInput?: number;
  reasoning?: number;
}

/** Where a request's tokens were spent: the configured model that answered and the deployment that served it. */
export interface Served {
  model: string;
  backend: string;
  upstreamModel: string;
}

/**
 * Which price applies to a request: the answering deployment's own price, else its model's configured price,
 * else the shipped table's entry for the upstream model (what the vendor bills), else for the model's name.
 * None of these: the price is unknown, and so is the cost (null and flagged, never a silent 0).
 */
@Injectable()
export class PriceBook {
  private readonly table: Record<string, Price>;

  constructor(private readonly config: GatewayConfig) {
    this.table = loadTable(config.billing.priceTable, config.billing.currency);
  }

  get currency(): string {
    return this.config.billing.currency;
  }

  priceOf(served: Served): Price | undefined {
    const model = this.config.models[served.model];
    const deployment = model?.deployments?.find(
      (d) => d.backend === served.backend && d.upstreamModel === served.upstreamModel,
    );
    return (
      plain(deployment?.price) ??
      plain(model?.price) ??
      this.table[served.upstreamModel] ??
      this.table[served.model]
    );
  }
}

function plain(price: PriceConfig | undefined): Price | undefined {
  return price
    ? { input: price.input, output: price.output, cachedInput: price.cachedInput, reasoning: price.reasoning }
    : undefined;
}

/** The shipped table, when it is there and in the configured currency (a table in another currency would mislead). */
function loadTable(path: string, currency: string): Record<string, Price> {
  if (!path) return {};
  const file = resolve(path);
  if (!existsSync(file)) return {};
  const table = JSON.parse(readFileSync(file, 'utf8')) as {
    currency?: string;
    models?: Record<string, Price>;
  };
  return table.currency === currency ? (table.models ?? {}) : {};
}
