import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { USAGE_OUTCOMES } from '../usage/usage-record';

/** The filters and paging of GET /admin/v1/requests and GET /v1/requests (docs/request-log.md). */
export class RequestLogQueryDto {
  /** One team (admin API; on /v1/requests only the token's own). */
  @IsOptional() @IsString() @MaxLength(128) team?: string;
  /** The model asked for, or the one that answered. */
  @IsOptional() @IsString() @MaxLength(256) model?: string;
  /** The HTTP status the client got. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(100) @Max(599) status?: number;
  /** How it ended: ok, error (the gateway or a backend failed it), aborted (the client left), rejected (a limit). */
  @IsOptional() @IsIn(USAGE_OUTCOMES as unknown as string[]) outcome?: string;
  /** chat.completions, messages, responses, embeddings. */
  @IsOptional() @IsString() @MaxLength(64) endpoint?: string;
  /** From this instant (inclusive). */
  @IsOptional() @IsISO8601({ strict: true }) from?: string;
  /** Up to this instant (exclusive). */
  @IsOptional() @IsISO8601({ strict: true }) to?: string;
  @IsOptional()
  @Matches(/^[0-9a-f]{32}$/, { message: 'must be a W3C trace id (32 lower-case hex digits)' })
  traceId?: string;
  /** Entries per page (default 50). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
  /** The `next` of the page before. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,400}$/, { message: 'must be the next cursor of a page' })
  after?: string;
}
