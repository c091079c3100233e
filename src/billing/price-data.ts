import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { calcPrice, findProvider, type ModelPrice, type Provider } from '@pydantic/genai-prices';
import type { Price } from './price';

/** One entry of the price data, as a model's price: what the gateway bills from it, and what it is. */
export interface PriceDataEntry {
  price: Price;
  /** The provider and model id of the entry that matched (the data's own ids). */
  provider: string;
  model: string;
  /** The data marks the model deprecated (retired or retiring at its vendor). */
  deprecated: boolean;
}

/**
 * The price data: @pydantic/genai-prices' bundled data (the default; the gateway never fetches prices), or a newer
 * data file of the same format (`billing.priceData`: a list of providers, as the package's data.json). A model id is
 * matched by the package (`calcPrice`, which applies each provider's match rules, its fallback providers and
 * dated price changes); the caller caches what it finds, since a match costs 10-27 µs.
 */
export class PriceData {
  /** Where the figures come from, for the log and the admin view: the package and version, or the file and its date. */
  readonly origin: string;
  private readonly providers?: readonly Provider[];

  constructor(file: string) {
    if (!file) {
      this.origin = `@pydantic/genai-prices ${bundledVersion()} (bundled data)`;
      return;
    }
    const path = resolve(file);
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(path, 'utf8'));
    } catch (error) {
      // Said as the key to fix, like the config's own problems (a bare "ENOENT" names neither key nor file's role).
      const why = (error as NodeJS.ErrnoException).code ?? 'not JSON';
      throw new Error(`billing.priceData: cannot read ${file} as genai-prices data (${why})`, {
        cause: error,
      });
    }
    if (!Array.isArray(data) || !data.every(isProvider))
      throw new Error(
        `billing.priceData: ${file} is not genai-prices data (a list of providers with models)`,
      );
    this.providers = data;
    this.origin = `${file} (dated ${statSync(path).mtime.toISOString().slice(0, 10)})`;
  }

  /** The provider whose API is at `baseUrl`, by the data's own patterns (api.openai.com -> openai, ...). */
  providerAt(baseUrl: string): string | undefined {
    if (this.providers)
      return this.providers.find((provider) => new RegExp(`^(?:${provider.api_pattern})`).test(baseUrl))?.id;
    return findProvider({ providerApiUrl: baseUrl })?.id;
  }

  /** The entry pricing `modelId` under `providerId` at `at`, or undefined when the data has none (or no token prices). */
  lookup(providerId: string, modelId: string, at: Date): PriceDataEntry | undefined {
    const provider = this.providers?.find((candidate) => candidate.id === providerId);
    if (this.providers && !provider) return undefined;
    let found: ReturnType<typeof calcPrice>;
    try {
      found = calcPrice({}, modelId, provider ? { provider, timestamp: at } : { providerId, timestamp: at });
    } catch {
      return undefined; // a data entry the package cannot read prices nothing
    }
    if (!found) return undefined;
    const price = tokenPrice(found.model_price);
    return (
      price && {
        price,
        provider: found.provider.id,
        model: found.model.id,
        deprecated: found.model.deprecated === true,
      }
    );
  }
}

type Figure = ModelPrice[string];

/**
 * The data's per-million-token figures as a Price: input, output (0 when absent: embeddings), cache reads and writes
 * (5-minute and 1-hour);
 * a long-context tier (Anthropic's and Google's above 200k input tokens) as `longContext`. No input price: nothing
 * the gateway bills by (a per-request or per-image price), so unknown.
 */
function tokenPrice(prices: ModelPrice): Price | undefined {
  const input = prices.input_mtok;
  if (input === undefined) return undefined;
  const price: Price = { input: base(input), output: base(prices.output_mtok) };
  if (prices.cache_read_mtok !== undefined) price.cachedInput = base(prices.cache_read_mtok);
  if (prices.cache_write_mtok !== undefined) price.cacheWrite = base(prices.cache_write_mtok);
  if (prices.cache_write_1h_mtok !== undefined) price.cacheWrite1h = base(prices.cache_write_1h_mtok);
  const above = firstTier(input);
  if (above !== undefined) {
    price.longContext = {
      above,
      input: tier(input, above),
      output: tier(prices.output_mtok, above),
      ...(prices.cache_read_mtok === undefined ? {} : { cachedInput: tier(prices.cache_read_mtok, above) }),
      ...(prices.cache_write_mtok === undefined ? {} : { cacheWrite: tier(prices.cache_write_mtok, above) }),
      ...(prices.cache_write_1h_mtok === undefined
        ? {}
        : { cacheWrite1h: tier(prices.cache_write_1h_mtok, above) }),
    };
  }
  return price;
}

function base(figure: Figure): number {
  if (figure === undefined) return 0;
  return typeof figure === 'number' ? figure : figure.base;
}

function firstTier(figure: Figure): number | undefined {
  return typeof figure === 'object' && figure.tiers.length ? figure.tiers[0].start : undefined;
}

/** The figure that applies above `start` input tokens (the package's own rule: the last tier whose start is below). */
function tier(figure: Figure, start: number): number {
  if (figure === undefined) return 0;
  if (typeof figure === 'number') return figure;
  let price = figure.base;
  for (const candidate of figure.tiers) if (start + 1 > candidate.start) price = candidate.price;
  return price;
}

/** Price data text (the package's data.json format: a list of providers with models), or undefined if it is not. */
export function parsePriceData(text: string): Provider[] | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  return Array.isArray(data) && data.length > 0 && data.every(isProvider) ? data : undefined;
}

function isProvider(value: unknown): value is Provider {
  const provider = value as Partial<Provider> | null;
  return (
    typeof provider === 'object' &&
    provider !== null &&
    typeof provider.id === 'string' &&
    typeof provider.api_pattern === 'string' &&
    Array.isArray(provider.models)
  );
}

function bundledVersion(): string {
  try {
    const entry = require.resolve('@pydantic/genai-prices');
    const manifest = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
      version?: string;
    };
    return manifest.version ?? 'unknown version';
  } catch {
    return 'unknown version';
  }
}
