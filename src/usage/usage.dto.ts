import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { STREAM_ID_PATTERN } from '../redis/stream-page';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MESSAGE = 'must be a UTC day, yyyy-mm-dd';

export class UsageQueryDto {
  @IsOptional() @IsString() team?: string;
  @IsOptional() @IsString() model?: string;
  /** Inclusive; default: 29 days before `to`. */
  @IsOptional()
  @Matches(DAY, { message: DAY_MESSAGE })
  @IsISO8601({ strict: true }, { message: DAY_MESSAGE })
  from?: string;
  /** Inclusive; default: today (UTC). */
  @IsOptional()
  @Matches(DAY, { message: DAY_MESSAGE })
  @IsISO8601({ strict: true }, { message: DAY_MESSAGE })
  to?: string;
  @IsOptional() @IsIn(['day', 'model', 'token', 'endpoint']) groupBy?: 'day' | 'model' | 'token' | 'endpoint';
}

export class UsageRecordsQueryDto {
  @IsString() team!: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000) limit?: number;
  @IsOptional() @Matches(STREAM_ID_PATTERN, { message: 'must be a record entry_id' }) before?: string;
}
