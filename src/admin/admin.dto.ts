import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsISO8601,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsStringMap } from '../common/validation/is-string-map';
import { ID_PATTERN } from '../core/ids';
import { CeilingSettings, LimitSettings } from '../core/limit-settings';
import { MAX_TOOL_GLOBS, toolGlobSyntaxProblem } from '../mcp/tool-globs';
import { STREAM_ID_PATTERN } from '../redis/stream-page';
import type { CeilingPatch } from '../teams/team-ceiling';
import { MAX_METADATA_KEYS, type LimitsPatch, type MetadataPatch } from '../teams/team.store';

const ID_MESSAGE = 'must be 1-63 chars of a-z, 0-9, "_" or "-", starting with a letter or digit';

/** Like IsStringMap, with null for a label to remove. */
function IsMetadataPatch(): PropertyDecorator {
  return ValidateBy({
    name: 'isMetadataPatch',
    validator: {
      validate: (value: unknown) =>
        value !== null &&
        typeof value === 'object' &&
        !Array.isArray(value) &&
        Object.keys(value).length <= MAX_METADATA_KEYS &&
        Object.values(value).every(
          (item) => item === null || (typeof item === 'string' && item.length <= 256),
        ),
      defaultMessage: () =>
        `$property must be an object of at most ${MAX_METADATA_KEYS} string values (each at most 256 chars), or null to remove a label`,
    },
  });
}

/** A list of globs over MCP tools' gateway names (`<server>__<tool>`), each as mcp/tool-globs.ts takes it. */
function IsToolGlobs(): PropertyDecorator {
  const problem = (value: unknown): string | undefined => {
    if (!Array.isArray(value)) return 'must be an array of globs';
    if (value.length > MAX_TOOL_GLOBS) return `must hold at most ${MAX_TOOL_GLOBS} globs`;
    for (const glob of value) {
      if (typeof glob !== 'string') return 'must hold strings only';
      const why = toolGlobSyntaxProblem(glob);
      if (why) return `holds ${JSON.stringify(glob)}, which ${why}`;
    }
    return undefined;
  };
  return ValidateBy({
    name: 'isToolGlobs',
    validator: {
      validate: (value: unknown) => problem(value) === undefined,
      defaultMessage: (args) =>
        `$property ${problem(args?.value)} (globs over <server>__<tool>, e.g. github__get_*)`,
    },
  });
}

/** A team's request-log setting; `content: null` follows logging.requests.content. */
export class TeamLoggingDto {
  @ValidateIf((o: TeamLoggingDto) => o.content !== null)
  @IsIn(['none', 'full'], { message: "$property must be none, full or null (the organisation's default)" })
  content!: 'none' | 'full' | null;
}

/** What a team may reach through /mcp (docs/mcp.md): configured server ids, and globs over `<server>__<tool>`. */
export class TeamMcpDto {
  @IsDefined({
    message:
      '$property is required: the MCP permissions are replaced whole, servers with tools (an array of MCP server ids)',
  })
  @IsArray()
  @IsString({ each: true })
  servers!: string[];
  /** Default `*`: every tool of its servers. Checked against `servers` by TeamStore (mcp/tool-globs.ts). */
  @IsOptional() @IsToolGlobs() tools: string[] = ['*'];
}

export class CreateTeamDto {
  @IsString() @Matches(ID_PATTERN, { message: ID_MESSAGE }) id!: string;
  /** Model names or `*` globs this team may call; default: all. */
  @IsOptional() @IsArray() @IsString({ each: true }) models?: string[];
  @IsOptional() @ValidateNested() @Type(() => LimitSettings) limits?: LimitSettings;
  /** The most a team-admin may give the team (org-admins only); the team's models and limits must be within it. */
  @IsOptional() @ValidateNested() @Type(() => CeilingSettings) ceiling?: CeilingSettings;
  @IsOptional() @IsStringMap() metadata?: Record<string, string>;
  /** Its team-members may keep team tokens of their own (default false). */
  @IsOptional() @IsBoolean() selfServiceTokens?: boolean;
  /** What the request log keeps of the team's requests (default: the organisation's, logging.requests.content). */
  @IsOptional() @ValidateNested() @Type(() => TeamLoggingDto) logging?: TeamLoggingDto;
  /** false: the team's requests skip the response cache of models that have one (docs/response-cache.md). */
  @IsOptional() @IsBoolean() responseCache?: boolean;
  /** The MCP servers and tools the team may reach (default: none). */
  /** An object, never null or an array (`{"servers": []}` is how MCP access is taken away). */
  @ValidateIf((o: { mcp?: unknown }) => o.mcp !== undefined)
  @IsObject({ message: '$property must be an object: {"servers": [...], "tools": [...]}' })
  @ValidateNested()
  @Type(() => TeamMcpDto)
  mcp?: TeamMcpDto;
}

/**
 * PATCH: changes only what it names (team.store.ts, TeamChanges). In `limits` and `metadata` a key set to null is
 * removed (each limit is optional, so null passes its checks); `limits: null` or `metadata: null` removes them all.
 */
export class UpdateTeamDto {
  /** Replaces the team's list. */
  @IsOptional() @IsArray() @IsString({ each: true }) models?: string[];
  @IsOptional() @ValidateNested() @Type(() => LimitSettings) limits?: LimitsPatch | null;
  /**
   * org-admins only: models replaced, limits merged (null drops one), `ceiling: null` removes it. Values the body
   * does not name are lowered into a lowered ceiling in the same write.
   */
  @IsOptional() @ValidateNested() @Type(() => CeilingSettings) ceiling?: CeilingPatch | null;
  @IsOptional() @IsMetadataPatch() metadata?: MetadataPatch | null;
  /** true: every token of the team is refused at once (on every replica). */
  @IsOptional() @IsBoolean() disabled?: boolean;
  /** Its team-members may issue, list, rotate and revoke team tokens of their own; a team-admin may change it. */
  @IsOptional() @IsBoolean() selfServiceTokens?: boolean;
  /** What the request log keeps of the team's requests; a team-admin may change it. */
  @IsOptional() @ValidateNested() @Type(() => TeamLoggingDto) logging?: TeamLoggingDto;
  /** false: the team's requests skip the response cache of models that have one (docs/response-cache.md). */
  @IsOptional() @IsBoolean() responseCache?: boolean;
  /** Replaces the team's MCP permissions (org-admins only). */
  /** An object, never null or an array (`{"servers": []}` is how MCP access is taken away). */
  @ValidateIf((o: { mcp?: unknown }) => o.mcp !== undefined)
  @IsObject({ message: '$property must be an object: {"servers": [...], "tools": [...]}' })
  @ValidateNested()
  @Type(() => TeamMcpDto)
  mcp?: TeamMcpDto;
}

export class CreateTokenDto {
  @IsOptional() @IsString() @MaxLength(128) name?: string;
  /** An absolute expiry (ISO 8601), or ... */
  @IsOptional() @IsISO8601({ strict: true }) expiresAt?: string;
  /** ... a relative one. */
  @IsOptional() @IsInt() @Min(1) expiresInSeconds?: number;
  /** Must be names or globs the team already allows. */
  @IsOptional() @IsArray() @IsString({ each: true }) models?: string[];
  /** Globs over `<server>__<tool>` narrowing the team's MCP tools (docs/mcp.md); default: all the team's. */
  @IsOptional() @IsToolGlobs() mcpTools?: string[];
  @IsOptional() @ValidateNested() @Type(() => LimitSettings) limits?: LimitSettings;
}

export class RotateTokenDto {
  /** How long the old secret keeps working (default 0: it stops at once). At most 30 days. */
  @IsOptional() @IsInt() @Min(0) @Max(30 * 86_400) gracePeriodSeconds?: number;
}

export class AuditQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
  /** An entry id: return entries older than it (paging). */
  @IsOptional() @Matches(STREAM_ID_PATTERN, { message: 'must be an audit entry id' }) before?: string;
  @IsOptional() @IsString() action?: string;
  /** `team/<id>` also matches that team's tokens. */
  @IsOptional() @IsString() target?: string;
}

export class TeamListQueryDto {
  /** A page of at most this many teams (by id); without it, every team. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
  /** The page after this team id. */
  @IsOptional() @IsString() after?: string;
  /** Only teams whose id contains this (case-insensitive). */
  @IsOptional() @IsString() @MaxLength(128) search?: string;
}

export class DeleteTeamQueryDto {
  @IsOptional() @IsIn(['true', 'false']) force?: string;
}
