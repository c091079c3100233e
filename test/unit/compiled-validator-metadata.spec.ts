import 'reflect-metadata';
import { Type } from 'class-transformer';
import { getMetadataStorage, IsString, Min, validate, ValidateNested } from 'class-validator';
import { CreateTeamDto } from '../../src/admin/admin.dto';
import { ChatCompletionRequestDto } from '../../src/endpoints/chat-completions/dto/chat-completion-request.dto';
import {
  compileValidator,
  MetadataUnreadable,
  type DtoClass,
} from '../../src/common/validation/compiled-validator';
import { ConsoleSignInDto } from '../../src/console/console.dto';
import { EmbeddingRequestDto } from '../../src/endpoints/embeddings/dto/embedding-request.dto';
import { MessagesPromptDto, MessagesRequestDto } from '../../src/endpoints/messages/dto/messages-request.dto';
import { ResponsesRequestDto } from '../../src/endpoints/responses/dto/responses-request.dto';

/**
 * The compiled validator reads class-validator's rules through its public metadata storage and class-transformer's
 * @Type through the one storage it has. An upgrade that changes what it reads must fail here, loudly, never compile
 * a validator from no rules (which would let every body through).
 */
describe('the compiled validator reads the DTOs rules or fails loudly', () => {
  afterEach(() => jest.restoreAllMocks());

  it.each<[string, DtoClass, Record<string, unknown>, string[]]>([
    [
      'chat',
      ChatCompletionRequestDto,
      { model: 'm', messages: [{ role: 'user', content: 5 }] },
      ['messages', '0', 'content'],
    ],
    [
      'messages',
      MessagesRequestDto,
      { model: 'm', max_tokens: 1, messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] },
      ['messages', '0', 'content'],
    ],
    [
      'count_tokens',
      MessagesPromptDto,
      { model: 'm', messages: [{ role: 'robot', content: 'x' }] },
      ['messages', '0', 'role'],
    ],
    [
      'responses',
      ResponsesRequestDto,
      { model: 'm', input: 'x', max_output_tokens: 'ten' },
      ['max_output_tokens'],
    ],
    ['embeddings', EmbeddingRequestDto, { model: 'm', input: 5 }, ['input']],
    ['admin', CreateTeamDto, { id: 'a', limits: { tokensPerDay: 'lots' } }, ['limits', 'tokensPerDay']],
    ['console', ConsoleSignInDto, { adminKey: 5, name: 'Ann' }, ['adminKey']],
  ])('%s: its rules are read, nested ones included', async (_name, dto, body, path) => {
    const problem = await compileValidator(dto, { strict: false })(body);
    expect(problem?.path.slice(0, path.length)).toEqual(path);
  });

  it('throws when a class reads as no rules (the metadata storage answers nothing)', () => {
    jest.spyOn(getMetadataStorage(), 'getTargetValidationMetadatas').mockReturnValue([]);
    expect(() => compileValidator(ChatCompletionRequestDto, { strict: false })).toThrow(MetadataUnreadable);
  });

  it("throws when a rule's validator cannot be found", () => {
    jest.spyOn(getMetadataStorage(), 'getTargetValidatorConstraints').mockReturnValue([]);
    expect(() => compileValidator(EmbeddingRequestDto, { strict: false })).toThrow(
      /EmbeddingRequestDto\.\w+: the validator of a customValidation rule cannot be found/,
    );
  });

  it('throws for a @ValidateNested whose @Type cannot be read (else the nested value is checked against nothing)', () => {
    class Inner {
      @IsString() name!: string;
    }
    class Untyped {
      @ValidateNested() inner!: Inner;
    }
    class Typed {
      @ValidateNested() @Type(() => Inner) inner!: Inner;
    }
    expect(() => compileValidator(Untyped, { strict: false })).toThrow(
      'Untyped.inner: @ValidateNested without a readable @Type',
    );
    expect(() => compileValidator(Typed, { strict: false })).not.toThrow();
  });

  it("fills a message's tokens as class-validator does ($property, $target, $constraint1, $value)", async () => {
    class Priced {
      @Min(3, { message: '$property of $target must be at least $constraint1 (got $value; $& stays)' })
      price!: number;
    }
    const problem = await compileValidator(Priced, { strict: false })({ price: 1 });
    const instance = Object.assign(new Priced(), { price: 1 });
    const [theirs] = await validate(instance);
    expect(problem?.message).toBe(theirs.constraints?.min);
    expect(problem?.message).toBe('price of Priced must be at least 3 (got 1; $& stays)');
  });
});
