import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { NestFactory } from '@nestjs/core';
import { Command, Option } from 'commander';
import pino from 'pino';
import { AccessAdminService } from '../admin/access-admin.service';
import { AuditLog, type Actor } from '../audit/audit.log';
import { AppLogger } from '../common/logging/logger';
import { loadConfig } from '../config/config.loader';
import { FAMILIES } from '../providers/families';
import { UsageQueryService, type UsageGroupBy } from '../usage/usage-query.service';
import { BudgetReport } from '../limits/budget-report';
import { ADMIN_ROUTES, type AdminCall, type RoutedCommand } from './admin-routes';
import { updatePriceData } from './prices-update';
import { migrateDatabase } from './db-migrate';
import { CliModule } from './cli.module';
import {
  ceilingFrom,
  limitOptions,
  limitsFrom,
  limitsPatchFrom,
  mcpFrom,
  mcpOptions,
  list,
  metadata,
  metadataPatchFrom,
} from './command-flags';
import { ceilingLimit, positiveInt } from './flag-values';
import { callGateway, gatewayTarget } from './gateway-client';
import { login, logout, whoami } from './login';

/**
 * `switchyard` (npx switchyard ...). Signed in (`switchyard login`), or given a gateway (`--url`, SWITCHYARD_URL),
 * the commands go over that gateway's admin API as the person (their roles apply; the audit trail names them):
 * admin-routes.ts maps each command to its route. Otherwise they are operators' commands over the same services as
 * the admin API, talking to the Redis named by the gateway's config (SWITCHYARD_CONFIG), each change audited as
 * `cli:<user>@<host>`. Output is JSON.
 */
type Services = {
  admin: AccessAdminService;
  audit: AuditLog;
  usage: UsageQueryService;
  budgets: BudgetReport;
  by: Actor;
};

async function withServices(work: (services: Services) => Promise<unknown>): Promise<void> {
  // The CLI never serves the admin API, so it does not need the admin key the config may require.
  const config = loadConfig(FAMILIES, {
    SWITCHYARD_ADMIN_KEY: randomBytes(16).toString('hex'),
    ...process.env,
  });
  const logger = new AppLogger('warn', pino.destination(2));
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config, logger), {
    logger: false,
    abortOnError: false,
  });
  try {
    const by: Actor = { actor: `cli:${userInfo().username}@${hostname()}` };
    const result = await work({
      admin: app.get(AccessAdminService),
      audit: app.get(AuditLog),
      usage: app.get(UsageQueryService),
      budgets: app.get(BudgetReport),
      by,
    });
    printJson(result);
  } finally {
    await app.close();
  }
}

function printJson(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

/**
 * A command's action: over the admin API of the gateway the CLI is signed in to (or is given), by its route in
 * ADMIN_ROUTES; else `local`, over Redis. commander hands an action its arguments, its flags, then the command.
 */
function routed<A extends unknown[]>(name: RoutedCommand, local: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    const command = args[args.length - 1] as Command;
    const target = gatewayTarget(command.optsWithGlobals<{ url?: string; local?: boolean }>());
    if (!target) return local(...args);
    const route = ADMIN_ROUTES[name] as (positional: string[], flags: Record<string, unknown>) => AdminCall;
    printJson(await callGateway(target, route(command.processedArgs as string[], command.opts())));
  };
}

/**
 * `switchyard deployments` without a gateway: from the config alone (models, deployments, weights, priorities,
 * fallbacks). With one (--url, a login), its GET /admin/v1/deployments adds each deployment's circuit and load.
 */
async function deploymentsFromConfig(): Promise<void> {
  const config = loadConfig(FAMILIES, {
    SWITCHYARD_ADMIN_KEY: randomBytes(16).toString('hex'),
    ...process.env,
  });
  const models = Object.entries(config.models).map(([model, settings]) => ({
    model,
    routing: settings.routing,
    deployments: settings.deployments ?? [
      { backend: settings.backend, upstreamModel: settings.upstreamModel, weight: 1, priority: 0 },
    ],
    fallbacks: settings.fallbacks ?? [],
  }));
  process.stdout.write(`${JSON.stringify(models, null, 2)}\n`);
}

/** The version in package.json (two folders up from dist/cli/ or src/cli/). */
function packageVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('../../package.json') as { version: string }).version;
}

export function buildProgram(): Command {
  const program = new Command('switchyard')
    .description('Manage Switchyard teams, tokens and usage')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError()
    .option(
      '--url <url>',
      "a gateway: commands go over its admin API (default: SWITCHYARD_URL, else the last login's gateway)",
    )
    .option('--local', 'talk to Redis by SWITCHYARD_CONFIG even when signed in to a gateway');
  program
    .command('login')
    .description(
      "Sign in through the gateway's identity provider; keeps a personal admin token for later commands",
    )
    .option('--loopback', "a browser redirect to this machine instead of the provider's device grant")
    .option('--name <name>', 'the token\'s name in lists (default: "switchyard CLI on <host>")')
    .option('--expires-in-days <days>', "the token's life, 1-90 (default 30)", positiveInt)
    .action(async (o: { loopback?: boolean; name?: string; expiresInDays?: number }, command: Command) => {
      const url = command.optsWithGlobals<{ url?: string }>().url ?? process.env.SWITCHYARD_URL;
      if (!url) throw new Error('login needs the gateway: --url <gateway> (or SWITCHYARD_URL)');
      printJson(
        await login({
          url,
          loopback: o.loopback,
          name: o.name ?? `switchyard CLI on ${hostname()}`,
          expiresInDays: o.expiresInDays,
          say: (line) => process.stderr.write(`switchyard: ${line}\n`),
        }),
      );
    });
  program
    .command('logout')
    .description("Revoke the login's token at the gateway and forget it")
    .action(async (_o, command: Command) => printJson(await logout(command.optsWithGlobals())));
  program
    .command('whoami')
    .description('Who the gateway takes this CLI for: the person and their roles (GET /admin/v1/me)')
    .action(async (_o, command: Command) => printJson(await whoami(command.optsWithGlobals())));
  const teams = program.command('teams').description('Teams');
  mcpOptions(limitOptions(teams.command('create <id>').description('Create a team')))
    .option(
      '--models <list>',
      "comma-separated model names or * globs (default: the ceiling's, else *)",
      list,
    )
    .option('--meta <key=value>', 'metadata label (repeatable)', metadata)
    .option('--ceiling-models <list>', 'the most models a team-admin may give it: names or * globs', list)
    .option('--ceiling-limit <limit=n>', 'a ceiling limit, e.g. rpm=600 (repeatable)', ceilingLimit)
    .action(
      routed('teams create', (id: string, o) =>
        withServices(({ admin, by }) =>
          admin.createTeam(by, id, {
            models: o.models,
            limits: limitsFrom(o),
            ceiling: ceilingFrom(o) ?? undefined,
            metadata: o.meta,
            mcp: mcpFrom(o),
          }),
        ),
      ),
    );
  teams
    .command('list')
    .description('List teams')
    .action(routed('teams list', () => withServices(({ admin }) => admin.teams.list())));
  teams
    .command('get <id>')
    .description('Show a team')
    .action(routed('teams get', (id: string) => withServices(({ admin }) => admin.teams.require(id))));
  teams
    .command('budget <id>')
    .description("A team's budgets: spent, remaining and the fraction used this window")
    .action(routed('teams budget', (id: string) => withServices(({ budgets }) => budgets.of(id))));
  mcpOptions(
    limitOptions(
      teams
        .command('update <id>')
        .description(
          'Change what the flags name and nothing else (e.g. --tpm 5000 keeps the other limits; --tpm none removes that one)',
        ),
      { removable: true },
    ),
  )
    .option('--models <list>', 'comma-separated model names or * globs (replaces the list)', list)
    .option('--meta <key=value>', 'set a metadata label (repeatable; other labels are kept)', metadata)
    .option(
      '--unset-meta <key>',
      'remove a metadata label (repeatable)',
      (key: string, previous: string[] = []) => [...previous, key],
    )
    .option('--ceiling-models <list>', 'replace the ceiling\'s models ("none" drops that bound)', list)
    .option(
      '--ceiling-limit <limit=n>',
      'set a ceiling limit, e.g. rpm=600, or drop one: rpm=none (repeatable; the others are kept)',
      ceilingLimit,
    )
    .option('--remove-ceiling', 'remove the ceiling (no value changes)')
    .action(
      routed('teams update', (id: string, o) =>
        withServices(({ admin, by }) =>
          admin.updateTeam(by, id, {
            models: o.models,
            limits: limitsPatchFrom(o),
            ceiling: ceilingFrom(o),
            metadata: metadataPatchFrom(o.meta, o.unsetMeta),
            mcp: mcpFrom(o),
          }),
        ),
      ),
    );
  teams
    .command('disable <id>')
    .description('Refuse every token of the team')
    .action(
      routed('teams disable', (id: string) =>
        withServices(({ admin, by }) => admin.updateTeam(by, id, { disabled: true })),
      ),
    );
  teams
    .command('enable <id>')
    .description("Accept the team's tokens again")
    .action(
      routed('teams enable', (id: string) =>
        withServices(({ admin, by }) => admin.updateTeam(by, id, { disabled: false })),
      ),
    );
  teams
    .command('delete <id>')
    .description('Delete a team (refused while it has tokens, unless --force)')
    .option('--force', 'also delete its tokens')
    .action(
      routed('teams delete', (id: string, o: { force?: boolean }) =>
        withServices(({ admin, by }) => admin.deleteTeam(by, id, o.force === true)),
      ),
    );

  const tokens = program.command('tokens').description('Team tokens');
  limitOptions(tokens.command('create').description('Issue a token (printed once)'))
    .requiredOption('--team <id>', 'the team')
    .option('--name <name>', 'a label')
    .option('--expires-in <seconds>', 'expiry, in seconds from now', positiveInt)
    .option('--models <list>', "narrower than the team's: comma-separated names or globs", list)
    .option('--mcp-tools <list>', "narrower than the team's MCP tools: globs over <server>__<tool>", list)
    .action(
      routed('tokens create', (o) =>
        withServices(({ admin, by }) =>
          admin.createToken(by, o.team as string, {
            name: o.name as string | undefined,
            expiresAt: o.expiresIn ? new Date(Date.now() + (o.expiresIn as number) * 1000) : undefined,
            models: o.models as string[] | undefined,
            mcpTools: o.mcpTools as string[] | undefined,
            limits: limitsFrom(o),
          }),
        ),
      ),
    );
  tokens
    .command('list')
    .requiredOption('--team <id>', 'the team')
    .description("List a team's tokens (no secrets)")
    .action(
      routed('tokens list', (o: { team: string }) =>
        withServices(({ admin }) => admin.teams.require(o.team).then(() => admin.tokens.list(o.team))),
      ),
    );
  tokens
    .command('revoke <tokenId>')
    .description('Revoke a token on every replica')
    .action(
      routed('tokens revoke', (id: string) => withServices(({ admin, by }) => admin.revokeToken(by, id))),
    );
  tokens
    .command('rotate <tokenId>')
    .description('New secret, same id (printed once)')
    .option('--grace <seconds>', 'how long the old secret keeps working (default 0)', (v) =>
      v === '0' ? 0 : positiveInt(v),
    )
    .action(
      routed('tokens rotate', (id: string, o: { grace?: number }) =>
        withServices(({ admin, by }) => admin.rotateToken(by, id, o.grace ?? 0)),
      ),
    );

  program
    .command('usage')
    .description('Usage counters')
    .option('--team <id>')
    .option('--model <name>')
    .option('--from <yyyy-mm-dd>')
    .option('--to <yyyy-mm-dd>', 'default: today (UTC)')
    .addOption(new Option('--group-by <by>').choices(['day', 'model', 'token', 'endpoint']).default('day'))
    .action(
      routed(
        'usage',
        (o: { team?: string; model?: string; from?: string; to?: string; groupBy: UsageGroupBy }) =>
          withServices(({ usage }) => {
            const to = o.to ?? new Date().toISOString().slice(0, 10);
            const from =
              o.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
            return usage
              .summary({ team: o.team, model: o.model, from, to, groupBy: o.groupBy })
              .then((summary) => ({ currency: usage.currency, ...summary }));
          }),
      ),
    );
  program
    .command('audit')
    .description('The admin audit trail, newest first')
    .option('--limit <n>', 'entries', positiveInt, 50)
    .option('--target <target>', 'e.g. team/research')
    .action(
      routed('audit', (o: { limit: number; target?: string }) =>
        withServices(({ audit }) => audit.read({ limit: o.limit, target: o.target })),
      ),
    );
  program
    .command('deployments')
    .description(
      "Each model's deployments; from a gateway (--url, a login), their health as that replica sees it (circuits are per replica)",
    )
    .action(routed('deployments', () => deploymentsFromConfig()));
  program
    .command('prices')
    .description('The price data (@pydantic/genai-prices format)')
    .command('update')
    .description(
      'Fetch the newest price data into a file (then set billing.priceData to it); the gateway itself never fetches',
    )
    .option('--out <file>', 'where to write it', 'config/price-data.json')
    .option('--url <url>', 'where to fetch it from (default: the genai-prices project)')
    // The program's own --url (a gateway) takes the flag wherever it is written; this command never talks to a
    // gateway, so here it is where the data comes from.
    .action((o: { out: string; url?: string }, command: Command) =>
      updatePriceData(o.out, o.url ?? command.optsWithGlobals<{ url?: string }>().url),
    );
  program
    .command('db')
    .description("The request log's PostgreSQL database (logging.requests.postgres)")
    .command('migrate')
    .description(
      'Create or update its schema (the gateway also does this at start); safe beside running replicas',
    )
    .action(() =>
      migrateDatabase(
        loadConfig(FAMILIES, { SWITCHYARD_ADMIN_KEY: randomBytes(16).toString('hex'), ...process.env }),
      ),
    );
  return program;
}
