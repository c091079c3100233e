import { IsString, Matches, MaxLength, MinLength } from 'class-validator';

export class ConsoleSignInDto {
  @IsString() @MinLength(1) @MaxLength(512) adminKey!: string;
  /** Who is signing in: the audit trail names every change `console:<name>`. */
  @IsString()
  @Matches(/^[\w.@ -]{1,64}$/, { message: 'must be 1-64 letters, digits, spaces or . _ @ -' })
  name!: string;
}
