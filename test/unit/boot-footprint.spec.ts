import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * The cloud families' SDKs are loaded by the first backend that signs with them, not by every gateway at boot:
 * together they are ~350 modules and ~30 MB of a process at rest (docs/performance.md, memory under load).
 * Reads the build's module graph in a fresh process (npm test builds before jest), by every module resolved: ES
 * modules loaded with require() (openid-client, jose) never appear in require.cache.
 */
const LAZY_PACKAGES = [
  '@azure/identity',
  'google-auth-library',
  '@aws-sdk/credential-providers',
  'jose',
  'openid-client',
  're2js', // the request log's configured redaction patterns: loaded by the first one
  // OpenTelemetry's SDK: loaded when telemetry.otlp is configured (telemetry/tracing-sdk.ts)
  '@opentelemetry/sdk-trace',
  '@opentelemetry/resources',
  '@opentelemetry/core',
  '@opentelemetry/semantic-conventions',
  // The MCP SDK (its v2 packages) and zod, its schemas' library: loaded by the first use of /mcp or of a configured
  // server (mcp-sdk.ts)
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/core',
  'zod',
];

function packagesLoadedBy(modules: string[]): string[] {
  const script = `
    const names = new Set();
    require('node:module').registerHooks({
      resolve(specifier, context, next) {
        const resolved = next(specifier, context);
        const m = resolved.url.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//);
        if (m) names.add(m[1]);
        return resolved;
      },
    });
    require('reflect-metadata');
    for (const m of ${JSON.stringify(modules)}) require(m);
    process.stdout.write(JSON.stringify([...names]));`;
  const out = execFileSync(process.execPath, ['-e', script], { cwd: resolve(__dirname, '../..') });
  return JSON.parse(out.toString()) as string[];
}

describe('what a gateway loads at boot', () => {
  it('loads the app and every family without the cloud SDKs, the OpenID Connect client, the tracing SDK or the MCP SDK', () => {
    const loaded = packagesLoadedBy(['./dist/bootstrap.js', './dist/providers/families.js']);
    expect(loaded).toEqual(expect.arrayContaining(['@nestjs/core', 'ioredis', 'undici']));
    expect(LAZY_PACKAGES.filter((name) => loaded.includes(name))).toEqual([]);
  });
});
