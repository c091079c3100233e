import {
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { PERSONAL_TOKEN_MAX_DAYS } from '../auth/personal-tokens';

export class ConsoleSignInDto {
  @IsString() @MinLength(1) @MaxLength(512) adminKey!: string;
  /** Who is signing in: the audit trail names every change `console:<name>`. */
  @IsString()
  @Matches(/^[\w.@ -]{1,64}$/, { message: 'must be 1-64 letters, digits, spaces or . _ @ -' })
  name!: string;
}

/** `switchyard login`: the ID token the CLI got from the identity provider, for a personal admin token. */
export class CliTokenRequestDto {
  /** The ID token of the CLI's public client (auth.oidc.cli.clientId), fresh from the provider; used once. */
  @IsString() @MinLength(1) @MaxLength(16_384) idToken!: string;
  /** What the token is for, as lists show it (default `switchyard CLI`). */
  @IsOptional() @IsString() @Length(1, 128) name?: string;
  /** Days until the token stops working: 1-90, default 30. */
  @IsOptional() @IsInt() @Min(1) @Max(PERSONAL_TOKEN_MAX_DAYS) expiresInDays?: number;
}
