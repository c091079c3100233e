import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';

/** GET /v1/responses/{id}/input_items: OpenAI's cursor paging (newest first by default). */
export class InputItemsQueryDto {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number;
  @IsOptional() @IsIn(['asc', 'desc'], { message: 'must be "asc" or "desc"' }) order?: 'asc' | 'desc';
  /** An item id: the page starts after it. */
  @IsOptional() @IsString() after?: string;
}
