import 'reflect-metadata';
import { IsArray, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export class CreateTeamDto {
  @IsString()
  @Matches(ID_PATTERN, { message: 'must be 1-63 chars of a-z, 0-9, "_" or "-", starting with a letter or digit' })
  id!: string;

  /** Model names or `*` globs this team may call; default: all. */
  @IsOptional() @IsArray() @IsString({ each: true }) models?: string[];
}

export class CreateTokenDto {
  @IsOptional() @IsString() @MaxLength(128) name?: string;
}
