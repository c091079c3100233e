import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

/** A cross-field rule; `check` returns a problem (without the property name) or null. */
export function Satisfies(
  check: (value: unknown, object: Record<string, unknown>) => string | null,
  options?: ValidationOptions,
) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'satisfies',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          check(value, args.object as Record<string, unknown>) === null,
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} ${check(args.value, args.object as Record<string, unknown>)}`,
      },
    });
}
