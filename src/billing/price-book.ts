import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { AppLogger } from '../common/logging/logger';
import { GatewayConfig, type PriceConfig } from '../config/config.schema';
import { FAMILY_BY_TYPE } from '../providers/families';
import type { Price } from './price';
import { retirementOf, type RetirementNotice } from './model-retirements';
import { PriceData, type PriceDataEntry } from './price-data';

export type { Price };

/** Where a request's tokens were spent: the configured model that answered and the deployment that served it. */
export interface Served {
  model: string;
  backend: string;
  upstreamModel: string;
}

/** Where a price came from (the admin view's `source`). */
export type PriceSource =
  | { kind: 'deployment' }
  | { kind: 'model' }
  | { kind: 'price-data'; provider: string; model: string; data: string }
  | { kind: 'table'; file: string; entry: string };

/** A deployment's price with its source; `price: null` when unknown (then `lookedUp` says what was looked for). */
export interface PriceExplained {
  price: Price | null;
  source: PriceSource | null;
  /** The price data marks the model deprecated. */
  deprecated: boolean;
  /** Its vendor's known retirement date (src/billing/model-retirements.ts), when there is one. */
  retirement?: RetirementNotice;
  lookedUp?: { provider?: string; model: string };
}

/** GET /admin/v1/prices/<model>: what each deployment of a model costs, and where the figure came from. */
export interface ModelPrices {
  object: 'model.prices';
  model: string;
  currency: string;
  /** The price data in use: the package's bundled data and its version, or `billing.priceData` and its date. */
  priceData: string;
  deployments: Array<{ backend: string; upstreamModel: string } & PriceExplained>;
}

/** Dated price changes in the data take effect within this long of their date (a resolved price is kept this long). */
const RESOLVED_FOR_MS = 60 * 60 * 1000;

/**
 * Which price applies to a request, first found:
 * 1. the answering deployment's configured figures (`deployments[].price`), then its model's (`models.<name>.price`);
 * 2. the price data (@pydantic/genai-prices, or `billing.priceData`): the entry for the deployment's upstream model
 *    under its provider (the provider whose API is at the backend's base URL, else its family's `priceProvider`),
 *    or the entry a `price: {provider, model}` names instead;
 * 3. the shipped table (`billing.priceTable`: the local models' explicit 0), by upstream model, then model name.
 * None of these: the price is unknown, and so is the cost (null and flagged, never a silent 0).
 * A price data entry is resolved once per (provider, model) and kept: matching costs 10-27 µs.
 */
@Injectable()
export class PriceBook implements OnModuleInit {
  private readonly table: Record<string, Price>;
  private readonly data: PriceData;
  private readonly resolved = new Map<string, { entry: PriceDataEntry | undefined; at: number }>();
  private readonly providers = new Map<string, string | undefined>();

  constructor(
    private readonly config: GatewayConfig,
    @Optional() private readonly logger?: AppLogger,
  ) {
    this.table = loadTable(config.billing.priceTable, config.billing.currency);
    this.data = new PriceData(config.billing.priceData);
  }

  get currency(): string {
    return this.config.billing.currency;
  }

  /**
   * Says where prices come from, and warns of every configured deployment whose model the price data marks
   * deprecated or whose vendor retires it (retired, or within RETIREMENT_WARNING_DAYS).
   */
  onModuleInit(): void {
    const log = this.logger?.pino;
    if (!log) return;
    log.info({ priceData: this.data.origin }, `prices: ${this.data.origin}`);
    for (const [model, settings] of Object.entries(this.config.models)) {
      const deployments = settings.deployments ?? [
        { backend: settings.backend, upstreamModel: settings.upstreamModel },
      ];
      for (const deployment of deployments) {
        const explained = this.explain({ model, ...deployment });
        const fields = { model, backend: deployment.backend, upstreamModel: deployment.upstreamModel };
        const what = `model "${model}" (${deployment.upstreamModel} on backend "${deployment.backend}")`;
        if (explained.deprecated && explained.source?.kind === 'price-data')
          log.warn(
            fields,
            `${what} is marked deprecated in the price data (${explained.source.provider}/${explained.source.model}): its vendor retires or has retired it`,
          );
        const retirement = explained.retirement;
        if (retirement?.status === 'retired')
          log.warn(
            { ...fields, retirement },
            `${what} was retired by its vendor on ${retirement.date}: its requests fail (${retirement.source})`,
          );
        else if (retirement?.status === 'retiring')
          log.warn(
            { ...fields, retirement },
            `${what} is retiring: its vendor shuts it down on ${retirement.date} (${retirement.source})`,
          );
      }
    }
  }

  priceOf(served: Served): Price | undefined {
    const { deployment, model } = this.configured(served);
    return (
      figures(deployment) ??
      figures(model) ??
      this.fromData(served, deployment ?? model)?.price ??
      this.table[served.upstreamModel] ??
      this.table[served.model]
    );
  }

  /**
   * The same choice as priceOf, saying where the price came from (GET /admin/v1/prices/<model>), and the model's
   * known retirement at its vendor, whatever priced it.
   */
  explain(served: Served): PriceExplained {
    const explained = this.explainPrice(served);
    const family = this.config.backends[served.backend]?.type;
    const retirement = family ? retirementOf(family, served.upstreamModel, new Date()) : undefined;
    return retirement ? { ...explained, retirement } : explained;
  }

  private explainPrice(served: Served): PriceExplained {
    const { deployment, model } = this.configured(served);
    const configured = figures(deployment) ?? figures(model);
    if (configured)
      return {
        price: configured,
        source: { kind: figures(deployment) ? 'deployment' : 'model' },
        deprecated: false,
      };
    const reference = deployment ?? model;
    const entry = this.fromData(served, reference);
    if (entry)
      return {
        price: entry.price,
        source: { kind: 'price-data', provider: entry.provider, model: entry.model, data: this.data.origin },
        deprecated: entry.deprecated,
      };
    const key = this.table[served.upstreamModel] ? served.upstreamModel : served.model;
    if (this.table[key])
      return {
        price: this.table[key],
        source: { kind: 'table', file: this.config.billing.priceTable, entry: key },
        deprecated: false,
      };
    return { price: null, source: null, deprecated: false, lookedUp: this.lookupKey(served, reference) };
  }

  /** Every deployment of a configured model with its price and where it came from; undefined for no such model. */
  explainModel(name: string): ModelPrices | undefined {
    const settings = this.config.models[name];
    if (!settings) return undefined;
    const deployments = settings.deployments ?? [
      { backend: settings.backend, upstreamModel: settings.upstreamModel },
    ];
    return {
      object: 'model.prices',
      model: name,
      currency: this.currency,
      priceData: this.data.origin,
      deployments: deployments.map(({ backend, upstreamModel }) => ({
        backend,
        upstreamModel,
        ...this.explain({ model: name, backend, upstreamModel }),
      })),
    };
  }

  private configured(served: Served): { deployment?: PriceConfig; model?: PriceConfig } {
    const model = this.config.models[served.model];
    const deployment = model?.deployments?.find(
      (d) => d.backend === served.backend && d.upstreamModel === served.upstreamModel,
    );
    return { deployment: deployment?.price, model: model?.price };
  }

  /**
   * The price data's entry for the deployment, resolved once per (provider, model) and kept for a while, with the
   * cache write prices the reference gives in place of (or beside) the entry's.
   */
  private fromData(served: Served, reference: PriceConfig | undefined): PriceDataEntry | undefined {
    return withCacheWrites(this.entryInData(served, reference), reference);
  }

  private entryInData(served: Served, reference: PriceConfig | undefined): PriceDataEntry | undefined {
    // The price data is in US dollars: in another billing currency its figures would mislead.
    if (this.config.billing.currency !== 'USD') return undefined;
    const { provider, model } = this.lookupKey(served, reference);
    if (!provider) return undefined;
    const key = `${provider}\u0000${model}`;
    const now = Date.now();
    const known = this.resolved.get(key);
    if (known && now - known.at < RESOLVED_FOR_MS) return known.entry;
    const entry = this.data.lookup(provider, model, new Date(now));
    this.resolved.set(key, { entry, at: now });
    return entry;
  }

  /** What the price data is asked for: a reference's provider and model, else the deployment's own. */
  private lookupKey(
    served: Served,
    reference: PriceConfig | undefined,
  ): { provider?: string; model: string } {
    const named = reference && namesPriceData(reference) ? reference : undefined;
    return {
      provider: named?.provider ?? this.providerOf(served.backend),
      model: named?.model ?? served.upstreamModel,
    };
  }

  /** A backend's provider in the price data: whose API its base URL is, else what its family is priced under. */
  private providerOf(backendId: string): string | undefined {
    if (this.providers.has(backendId)) return this.providers.get(backendId);
    const backend = this.config.backends[backendId];
    const provider = backend
      ? ((backend.baseUrl ? this.data.providerAt(backend.baseUrl) : undefined) ??
        FAMILY_BY_TYPE.get(backend.type)?.priceProvider)
      : undefined;
    this.providers.set(backendId, provider);
    return provider;
  }
}

/** A configured price's figures; a reference to the price data has none. */
function figures(price: PriceConfig | undefined): Price | undefined {
  if (!price || namesPriceData(price) || price.input === undefined || price.output === undefined)
    return undefined;
  return {
    input: price.input,
    output: price.output,
    cachedInput: price.cachedInput,
    reasoning: price.reasoning,
    cacheWrite: price.cacheWrite,
    cacheWrite1h: price.cacheWrite1h,
    ...(price.longContext ? { longContext: { ...price.longContext } } : {}),
  };
}

/**
 * An entry with a reference's own cache write prices (the data lacks some: no 1-hour write price for Claude on
 * Bedrock or Vertex). They are the base rates: a long-context tier of the data keeps its own.
 */
function withCacheWrites(
  entry: PriceDataEntry | undefined,
  reference: PriceConfig | undefined,
): PriceDataEntry | undefined {
  if (!entry || !reference || (reference.cacheWrite === undefined && reference.cacheWrite1h === undefined))
    return entry;
  const price: Price = { ...entry.price };
  if (reference.cacheWrite !== undefined) price.cacheWrite = reference.cacheWrite;
  if (reference.cacheWrite1h !== undefined) price.cacheWrite1h = reference.cacheWrite1h;
  return { ...entry, price };
}

function namesPriceData(price: PriceConfig): boolean {
  return price.provider !== undefined || price.model !== undefined;
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
