import { ValidateBy, type ValidationOptions } from 'class-validator';

/** A flat object of short string values (labels), at most 64 keys. */
export function IsStringMap(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStringMap',
      validator: {
        validate: (value: unknown) =>
          value !== null &&
          typeof value === 'object' &&
          !Array.isArray(value) &&
          Object.keys(value).length <= 64 &&
          Object.values(value).every((item) => typeof item === 'string' && item.length <= 256),
        defaultMessage: () =>
          '$property must be an object of at most 64 string values (each at most 256 chars)',
      },
    },
    options,
  );
}
