#!/usr/bin/env node
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { NestFactory } from '@nestjs/core';
import { Command, Option } from 'commander';
import pino from 'pino';
import { AccessAdminService } from '../admin/access-admin.service';
import { AuditLog, type Actor } from '../audit/audit.log';
import { GatewayException } from '../core/errors/gateway.exception';
import { AppLogger } from '../common/logging/logger';
import { ConfigError, loadConfig } from '../config/config.loader';
import { FAMILIES } from '../providers/families';
import { cleanLimits, LIMIT_CATALOGUE, LIMIT_NAMES, type Limits } from '../core/limit-settings';
import { isMoneyLimit } from '../core/limit-catalogue';
import { UsageQueryService, type UsageGroupBy } from '../usage/usage-query.service';
import type { CeilingPatch } from '../teams/team-ceiling';
import type { LimitsPatch, MetadataPatch } from '../teams/team.store';
import { BudgetReport } from '../limits/budget-report';
import { updatePriceData } from './prices-update';
import { CliModule } from './cli.module';
import { ceilingLimit, positiveAmount, positiveInt } from './flag-values';

/**
 * `switchyard` (npx switchyard ...): operators' commands over the same services as the
 * admin API, talking to the Redis named by the gateway's config (SWITCHYARD_CONFIG).
 * Every change is audited as `cli:<user>@<host>`. Output is JSON.
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
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await app.close();
  }
}

/**
 * One flag per limit, from the limit catalogue (`--rpm` requestsPerMinute, ...). With `removable` (updates), a
 * flag's value may also be `none`, which removes that limit.
 */
const limitOptions = (command: Command, { removable = false } = {}) => {
  for (const name of LIMIT_NAMES) {
    const parse = isMoneyLimit(name) ? positiveAmount : positiveInt;
    const option = new Option(
      `${LIMIT_CATALOGUE[name].flag} <n>`,
      removable ? `${name} ("none" removes it)` : name,
    );
    // 'none' is kept as is (commander stores a parser's null as ''); limitFlags reads it as null.
    command.addOption(
      option.argParser(removable ? (value: string) => (value === 'none' ? value : parse(value)) : parse),
    );
  }
  return command;
};

/** What each limit flag was given (a number, or null for `none`), by limit name; flags not given are absent. */
function limitFlags(options: Record<string, unknown>): LimitsPatch {
  const given: LimitsPatch = {};
  for (const name of LIMIT_NAMES) {
    const value = options[new Option(`${LIMIT_CATALOGUE[name].flag} <n>`).attributeName()] as
      number | 'none' | undefined;
    if (value !== undefined) given[name] = value === 'none' ? null : value;
  }
  return given;
}

/** The limits the flags set, or undefined when none was given. */
function limitsFrom(options: Record<string, unknown>): Limits | undefined {
  const limits = cleanLimits(limitFlags(options) as Limits);
  return Object.keys(limits).length ? limits : undefined;
}

/** The limit changes the flags name (null: removed), or undefined when none was given: nothing else changes. */
function limitsPatchFrom(options: Record<string, unknown>): LimitsPatch | undefined {
  const patch = limitFlags(options);
  return Object.keys(patch).length ? patch : undefined;
}

/**
 * The ceiling the flags give (--ceiling-models, --ceiling-limit; in an update `none` drops a part, and
 * --remove-ceiling all of it), or undefined when none was given.
 */
function ceilingFrom(options: Record<string, unknown>): CeilingPatch | null | undefined {
  if (options.removeCeiling) return null;
  const models = options.ceilingModels as string[] | undefined;
  const limits = options.ceilingLimit as LimitsPatch | undefined;
  if (!models && !limits) return undefined;
  return {
    ...(models ? { models: models.length === 1 && models[0] === 'none' ? null : models } : {}),
    ...(limits ? { limits } : {}),
  };
}

/** Labels set with --meta and removed with --unset-meta, or undefined when neither was given. */
function metadataPatchFrom(
  set: Record<string, string> | undefined,
  unset: string[] | undefined,
): MetadataPatch | undefined {
  const both = (unset ?? []).filter((key) => set && key in set);
  if (both.length) throw new Error(`--meta and --unset-meta both name ${both.join(', ')}`);
  if (!set && !unset) return undefined;
  return { ...set, ...Object.fromEntries((unset ?? []).map((key) => [key, null])) };
}

/**
 * `switchyard deployments`: from the config alone (models, deployments, weights, priorities, fallbacks), or with
 * `--url` from a running replica's GET /admin/v1/deployments, which adds each deployment's circuit and load.
 */
async function deployments(url: string | undefined): Promise<void> {
  if (url) {
    const key = process.env.SWITCHYARD_ADMIN_KEY;
    if (!key) throw new Error('--url needs SWITCHYARD_ADMIN_KEY (the admin key) in the environment');
    const response = await fetch(`${url.replace(/\/+$/, '')}/admin/v1/deployments`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await response.json()) as { data?: unknown; error?: { message: string } };
    if (!response.ok) throw new Error(`${response.status}: ${body.error?.message ?? 'the gateway refused'}`);
    process.stdout.write(`${JSON.stringify(body.data, null, 2)}\n`);
    return;
  }
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

function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function metadata(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at < 1) throw new Error(`--meta wants key=value, got "${value}"`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

export function buildProgram(): Command {
  const program = new Command('switchyard')
    .description('Manage Switchyard teams, tokens and usage')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError();
  const teams = program.command('teams').description('Teams');
  limitOptions(teams.command('create <id>').description('Create a team'))
    .option(
      '--models <list>',
      "comma-separated model names or * globs (default: the ceiling's, else *)",
      list,
    )
    .option('--meta <key=value>', 'metadata label (repeatable)', metadata)
    .option('--ceiling-models <list>', 'the most models a team-admin may give it: names or * globs', list)
    .option('--ceiling-limit <limit=n>', 'a ceiling limit, e.g. rpm=600 (repeatable)', ceilingLimit)
    .action((id: string, o) =>
      withServices(({ admin, by }) =>
        admin.createTeam(by, id, {
          models: o.models,
          limits: limitsFrom(o),
          ceiling: ceilingFrom(o) ?? undefined,
          metadata: o.meta,
        }),
      ),
    );
  teams
    .command('list')
    .description('List teams')
    .action(() => withServices(({ admin }) => admin.teams.list()));
  teams
    .command('get <id>')
    .description('Show a team')
    .action((id: string) => withServices(({ admin }) => admin.teams.require(id)));
  teams
    .command('budget <id>')
    .description("A team's budgets: spent, remaining and the fraction used this window")
    .action((id: string) => withServices(({ budgets }) => budgets.of(id)));
  limitOptions(
    teams
      .command('update <id>')
      .description(
        'Change what the flags name and nothing else (e.g. --tpm 5000 keeps the other limits; --tpm none removes that one)',
      ),
    { removable: true },
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
    .action((id: string, o) =>
      withServices(({ admin, by }) =>
        admin.updateTeam(by, id, {
          models: o.models,
          limits: limitsPatchFrom(o),
          ceiling: ceilingFrom(o),
          metadata: metadataPatchFrom(o.meta, o.unsetMeta),
        }),
      ),
    );
  teams
    .command('disable <id>')
    .description('Refuse every token of the team')
    .action((id: string) => withServices(({ admin, by }) => admin.updateTeam(by, id, { disabled: true })));
  teams
    .command('enable <id>')
    .description("Accept the team's tokens again")
    .action((id: string) => withServices(({ admin, by }) => admin.updateTeam(by, id, { disabled: false })));
  teams
    .command('delete <id>')
    .description('Delete a team (refused while it has tokens, unless --force)')
    .option('--force', 'also delete its tokens')
    .action((id: string, o: { force?: boolean }) =>
      withServices(({ admin, by }) => admin.deleteTeam(by, id, o.force === true)),
    );

  const tokens = program.command('tokens').description('Team tokens');
  limitOptions(tokens.command('create').description('Issue a token (printed once)'))
    .requiredOption('--team <id>', 'the team')
    .option('--name <name>', 'a label')
    .option('--expires-in <seconds>', 'expiry, in seconds from now', positiveInt)
    .option('--models <list>', "narrower than the team's: comma-separated names or globs", list)
    .action((o) =>
      withServices(({ admin, by }) =>
        admin.createToken(by, o.team as string, {
          name: o.name as string | undefined,
          expiresAt: o.expiresIn ? new Date(Date.now() + (o.expiresIn as number) * 1000) : undefined,
          models: o.models as string[] | undefined,
          limits: limitsFrom(o),
        }),
      ),
    );
  tokens
    .command('list')
    .requiredOption('--team <id>', 'the team')
    .description("List a team's tokens (no secrets)")
    .action((o: { team: string }) =>
      withServices(({ admin }) => admin.teams.require(o.team).then(() => admin.tokens.list(o.team))),
    );
  tokens
    .command('revoke <tokenId>')
    .description('Revoke a token on every replica')
    .action((id: string) => withServices(({ admin, by }) => admin.revokeToken(by, id)));
  tokens
    .command('rotate <tokenId>')
    .description('New secret, same id (printed once)')
    .option('--grace <seconds>', 'how long the old secret keeps working (default 0)', (v) =>
      v === '0' ? 0 : positiveInt(v),
    )
    .action((id: string, o: { grace?: number }) =>
      withServices(({ admin, by }) => admin.rotateToken(by, id, o.grace ?? 0)),
    );

  program
    .command('usage')
    .description('Usage counters')
    .option('--team <id>')
    .option('--model <name>')
    .option('--from <yyyy-mm-dd>')
    .option('--to <yyyy-mm-dd>', 'default: today (UTC)')
    .addOption(new Option('--group-by <by>').choices(['day', 'model', 'token', 'endpoint']).default('day'))
    .action((o: { team?: string; model?: string; from?: string; to?: string; groupBy: UsageGroupBy }) =>
      withServices(({ usage }) => {
        const to = o.to ?? new Date().toISOString().slice(0, 10);
        const from =
          o.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
        return usage
          .summary({ team: o.team, model: o.model, from, to, groupBy: o.groupBy })
          .then((summary) => ({ currency: usage.currency, ...summary }));
      }),
    );
  program
    .command('audit')
    .description('The admin audit trail, newest first')
    .option('--limit <n>', 'entries', positiveInt, 50)
    .option('--target <target>', 'e.g. team/research')
    .action((o: { limit: number; target?: string }) =>
      withServices(({ audit }) => audit.read({ limit: o.limit, target: o.target })),
    );
  program
    .command('deployments')
    .description(
      "Each model's deployments; with --url, their health as that gateway replica sees it (circuits are per replica)",
    )
    .option('--url <url>', "a gateway's address; needs SWITCHYARD_ADMIN_KEY")
    .action((o: { url?: string }) => deployments(o.url));
  program
    .command('prices')
    .description('The price data (@pydantic/genai-prices format)')
    .command('update')
    .description(
      'Fetch the newest price data into a file (then set billing.priceData to it); the gateway itself never fetches',
    )
    .option('--out <file>', 'where to write it', 'config/price-data.json')
    .option('--url <url>', 'where to fetch it from (default: the genai-prices project)')
    .action((o: { out: string; url?: string }) => updatePriceData(o.out, o.url));
  return program;
}

buildProgram()
  .parseAsync()
  .catch((error: unknown) => {
    if (error instanceof GatewayException || error instanceof ConfigError)
      process.stderr.write(`switchyard: ${error.message}\n`);
    else process.stderr.write(`switchyard: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = error instanceof ConfigError ? 78 : 1;
  });
