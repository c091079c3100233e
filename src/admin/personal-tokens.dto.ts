import 'reflect-metadata';
import { IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { PERSONAL_TOKEN_MAX_DAYS } from '../auth/personal-tokens';

export class CreatePersonalTokenDto {
  /** What the token is for (`laptop`, `ci-deploy`): shown in lists and the audit trail. */
  @IsString() @Length(1, 128) name!: string;
  /** Days until it stops working: 1-90, default 30. */
  @IsOptional() @IsInt() @Min(1) @Max(PERSONAL_TOKEN_MAX_DAYS) expiresInDays?: number;
}
