import 'reflect-metadata';
import { IsInt, IsString, Min, validate } from 'class-validator';
import { memoizeValidationMetadata } from '../../src/common/validation/metadata-memo';

/** The memo must give class-validator's own answers, including for classes decorated after it was installed. */
describe('validation metadata memo', () => {
  beforeAll(() => memoizeValidationMetadata());

  class Base {
    @IsString() name!: string;
  }
  class Derived extends Base {
    @IsInt() @Min(1) count!: number;
  }

  const problems = async (object: object) =>
    (await validate(object)).map(
      (e) =>
        `${e.property}:${Object.keys(e.constraints ?? {})
          .sort()
          .join(',')}`,
    );

  it('validates own and inherited properties the same on every call (remembered lookups)', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await problems(Object.assign(new Derived(), { name: 7, count: 0 }))).toEqual([
        'count:min',
        'name:isString',
      ]);
      expect(await problems(Object.assign(new Derived(), { name: 'ok', count: 2 }))).toEqual([]);
      expect(await problems(Object.assign(new Base(), { name: 1 }))).toEqual(['name:isString']);
    }
  });

  it('sees decorators registered after a lookup was remembered', async () => {
    class Later extends Base {}
    expect(await problems(Object.assign(new Later(), { name: 'x', extra: 'y' }))).toEqual([]);
    // Decorating a property now adds metadata; the remembered (empty) answer for Later must be forgotten.
    IsInt()(Later.prototype, 'extra');
    expect(await problems(Object.assign(new Later(), { name: 'x', extra: 'y' }))).toEqual(['extra:isInt']);
  });
});
