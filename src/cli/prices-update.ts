import { renameSync, writeFileSync } from 'node:fs';
import { REMOTE_DATA_JSON_URL } from '@pydantic/genai-prices';
import { parsePriceData } from '../billing/price-data';

/**
 * `switchyard prices update`: fetches the genai-prices project's newest data (or `url`'s) and writes it to `out`,
 * whole or not at all (a temporary file renamed into place), after checking it is price data. The gateway reads it
 * at start when `billing.priceData` names it; nothing the gateway does at run time calls out.
 */
export async function updatePriceData(out: string, url = REMOTE_DATA_JSON_URL): Promise<void> {
  const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  const text = await response.text();
  const providers = parsePriceData(text);
  if (!providers) throw new Error(`${url} did not send genai-prices data (a list of providers with models)`);
  const partial = `${out}.partial`;
  writeFileSync(partial, text);
  renameSync(partial, out);
  const models = providers.reduce((sum, provider) => sum + provider.models.length, 0);
  const next = `set billing.priceData: ${out} and restart the gateway to use it`;
  process.stdout.write(
    `${JSON.stringify({ file: out, from: url, providers: providers.length, models, next }, null, 2)}\n`,
  );
}
