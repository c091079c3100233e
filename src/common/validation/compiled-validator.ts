import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';
import { nextTurn } from '../http/json-shape';

/*
 * What this reads, and how an upgrade that changes it is caught:
 * - class-validator's rules through its public getMetadataStorage() (getTargetValidationMetadatas,
 *   groupByPropertyName, getTargetValidatorConstraints). A decorated class that reads as no rules, or a rule whose
 *   validator cannot be found, throws MetadataUnreadable when compiled (at start-up, validation.pipe.ts), instead
 *   of compiling to a validator that lets everything through.
 * - class-transformer's @Type metadata, which has no public entry point: its defaultMetadataStorage, the same
 *   import class-validator-jsonschema documents for the same need. It is checked on load, and a @ValidateNested
 *   whose @Type cannot be found throws MetadataUnreadable.
 * - message templates ($property, $constraint1...) are filled here (fillMessage), as class-validator does; the
 *   parity test (test/unit/compiled-validator.spec.ts) holds every message to class-validator's own.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage: typeMetadata } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage?: {
    findTypeMetadata?(
      target: DtoClass,
      property: string,
    ): { typeFunction: (options?: unknown) => DtoClass } | undefined;
  };
};
if (typeof typeMetadata?.findTypeMetadata !== 'function')
  throw new Error(
    "class-transformer's defaultMetadataStorage.findTypeMetadata (class-transformer/cjs/storage) is gone: the compiled validator cannot find @Type classes (src/common/validation/compiled-validator.ts)",
  );
const findTypeMetadata = typeMetadata.findTypeMetadata.bind(typeMetadata);

/** A DTO class (what `@Body()` names, what `@Type()` points at). */
export type DtoClass = abstract new (...args: never[]) => unknown;

type ValidationMetadata = ReturnType<
  ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']
>[number];
type ConstraintMetadata = ReturnType<
  ReturnType<typeof getMetadataStorage>['getTargetValidatorConstraints']
>[number];

/** The first thing wrong with a value: where (class-validator's property names, outermost first) and what. */
export interface ValidationProblem {
  path: string[];
  /** The failing constraint's name (`isString`, `min`, ...) and class-validator's message for it. */
  constraint: string;
  message: string;
}

/**
 * Checks a plain parsed value against a DTO class; null when it passes. Synchronous, except that the items of a
 * long top-level array of nested objects (chat `messages`) are checked a slice per turn of the event loop.
 */
export type CompiledValidator = (value: Record<string, unknown>) => Promise<ValidationProblem | null>;

/** Items of a top-level array of nested objects checked per turn of the event loop (~1 ms). */
export const ITEMS_PER_TURN = 4096;

/**
 * Type checks come first: class-validator lists constraints in reverse decorator order, so `"10"` for
 * `@IsInt() @Min(1)` used to say "must not be less than 1" when the problem is that it is not an integer.
 */
export const TYPE_CONSTRAINTS = [
  'isDefined',
  'isString',
  'isInt',
  'isNumber',
  'isBoolean',
  'isArray',
  'isObject',
  'isIn',
  'isEnum',
];

interface Check {
  metadata: ValidationMetadata;
  /** The constraint's name (`isString`...), as class-validator keys its errors. */
  name: string;
  /** The constraint's validator, resolved once (class-validator looks it up in its container on every call). */
  instance: ConstraintMetadata['instance'];
}

interface CompiledProperty {
  name: string;
  /** IsOptional, ValidateIf: all must hold for the property to be checked at all. */
  conditions: Array<(object: object, value: unknown) => boolean>;
  checks: Check[];
  /** ValidateNested: the class its objects are checked against (class-transformer's @Type), if any. */
  nested: ValidationMetadata | undefined;
  nestedClass: (() => CompiledClass) | undefined;
}

interface CompiledClass {
  name: string;
  properties: CompiledProperty[];
  /** Own property names that have rules (strict mode refuses every other key). */
  known: Set<string>;
}

/** What the compiler cannot run itself (async validators, promise validation); such classes use class-validator. */
export class UnsupportedValidation extends Error {}

/**
 * The rules of a class could not be read as written (a class-validator or class-transformer upgrade changed what
 * is read here): never a fallback, since a validator compiled from missing rules would let everything through.
 */
export class MetadataUnreadable extends Error {}

/**
 * A validator for a DTO class, compiled once from the class's own class-validator metadata (the decorators stay the
 * one source of truth; `/openapi.json` is generated from the same metadata). It runs the same constraint functions
 * class-validator would, in the same order, and reports the problem class-validator's first error would name, but
 * on the plain parsed body: no class-transformer instances, no ValidationError per property, no promises, no
 * metadata lookups per object. class-validator cost ~8 us per chat message (650,000 one-letter messages blocked the
 * event loop ~5 s); this costs a few hundred nanoseconds. Stops at the first problem.
 *
 * One rule is stricter than class-validator's: where a nested class is expected (`@ValidateNested` with `@Type`),
 * an array item must be an object. class-validator looks up the rules of an object by its constructor, so an array
 * in that place (`{"messages": [[]]}`) was checked against nothing and passed.
 */
export function compileValidator(target: DtoClass, options: { strict: boolean }): CompiledValidator {
  const compiled = compileClass(target, new Map());
  return (value) => checkRoot(compiled, value, options.strict);
}

/** checkObject for the body itself, with a long array of nested objects checked a slice per turn. */
async function checkRoot(
  compiled: CompiledClass,
  object: Record<string, unknown>,
  strict: boolean,
): Promise<ValidationProblem | null> {
  const unknown = strict ? unknownKey(compiled, object) : null;
  if (unknown) return unknown;
  const args = argumentsFor(compiled, object);
  for (const property of compiled.properties) {
    const value = object[property.name];
    const sliced =
      Array.isArray(value) && value.length > ITEMS_PER_TURN && property.nestedClass !== undefined;
    const problem = checkProperty(property, object, strict, args, !sliced);
    if (problem) return problem;
    if (!sliced || !holds(property, object, value)) continue;
    const items = value as unknown[];
    for (let start = 0; start < items.length; start += ITEMS_PER_TURN) {
      // A slice per turn, queued with the other heavy steps of concurrent bodies (json-shape.ts, nextTurn).
      if (start > 0) await nextTurn();
      const itemProblem = checkItems(
        property,
        items,
        start,
        Math.min(items.length, start + ITEMS_PER_TURN),
        strict,
      );
      if (itemProblem) return itemProblem;
    }
  }
  return null;
}

function compileClass(target: DtoClass, seen: Map<DtoClass, CompiledClass>): CompiledClass {
  const existing = seen.get(target);
  if (existing) return existing;
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(target, '', true, false, undefined);
  if (!Array.isArray(metadatas) || metadatas.length === 0)
    throw new MetadataUnreadable(`${target.name}: no class-validator rules could be read`);
  const grouped = storage.groupByPropertyName(metadatas);
  const compiled: CompiledClass = { name: target.name, properties: [], known: new Set() };
  seen.set(target, compiled);
  for (const [name, group] of Object.entries(grouped)) {
    if (group.length === 0) continue;
    compiled.known.add(name);
    const property: CompiledProperty = {
      name,
      conditions: [],
      checks: [],
      nested: undefined,
      nestedClass: undefined,
    };
    const defined: Check[] = [];
    for (const metadata of group) {
      switch (metadata.type) {
        case ValidationTypes.CONDITIONAL_VALIDATION:
          property.conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
          break;
        case ValidationTypes.CUSTOM_VALIDATION:
        case ValidationTypes.IS_DEFINED: {
          const constraints = storage.getTargetValidatorConstraints(metadata.constraintCls);
          if (constraints.length === 0)
            throw new MetadataUnreadable(
              `${target.name}.${name}: the validator of a ${metadata.type} rule cannot be found`,
            );
          if (constraints.some((constraint) => constraint.async))
            throw new UnsupportedValidation(`${target.name}.${name}: async validator`);
          for (const constraint of constraints) {
            (metadata.type === ValidationTypes.IS_DEFINED ? defined : property.checks).push({
              metadata,
              name: constraint.name ?? metadata.type,
              instance: constraint.instance,
            });
          }
          break;
        }
        case ValidationTypes.NESTED_VALIDATION: {
          property.nested = metadata;
          const type = findTypeMetadata(target, name);
          // Without @Type there is no class to check the nested value against: class-validator checks a plain
          // object against nothing, and so would this. Every @ValidateNested in the gateway has its @Type.
          if (!type)
            throw new MetadataUnreadable(`${target.name}.${name}: @ValidateNested without a readable @Type`);
          let nestedClass: CompiledClass | undefined;
          // Resolved on first use: @Type's function may name a class declared further down the file.
          property.nestedClass = () => (nestedClass ??= compileClass(type.typeFunction(), seen));
          break;
        }
        case ValidationTypes.WHITELIST:
          break;
        default:
          throw new UnsupportedValidation(`${target.name}.${name}: ${metadata.type}`);
      }
    }
    // class-validator checks IsDefined before the other constraints (and lists its failure first).
    property.checks.unshift(...defined);
    compiled.properties.push(property);
  }
  return compiled;
}

function checkObject(
  compiled: CompiledClass,
  object: Record<string, unknown>,
  strict: boolean,
): ValidationProblem | null {
  const unknown = strict ? unknownKey(compiled, object) : null;
  if (unknown) return unknown;
  const args = argumentsFor(compiled, object);
  for (const property of compiled.properties) {
    const problem = checkProperty(property, object, strict, args, true);
    if (problem) return problem;
  }
  return null;
}

/** Strict mode: the first key the class has no rule for (class-validator's whitelist errors come first). */
function unknownKey(compiled: CompiledClass, object: Record<string, unknown>): ValidationProblem | null {
  for (const key of Object.keys(object)) {
    if (!compiled.known.has(key))
      return {
        path: [key],
        constraint: ValidationTypes.WHITELIST,
        message: `property ${key} should not exist`,
      };
  }
  return null;
}

/** One arguments object per object checked, as class-validator passes them (validators read `object`, `value`). */
function argumentsFor(compiled: CompiledClass, object: Record<string, unknown>): ValidationArguments {
  return { targetName: compiled.name, property: '', object, value: undefined, constraints: [] };
}

/** IsOptional, ValidateIf: whether the property is checked at all. */
function holds(property: CompiledProperty, object: Record<string, unknown>, value: unknown): boolean {
  for (const condition of property.conditions) if (!condition(object, value)) return false;
  return true;
}

/** The property's own constraints, then (`withItems`) the nested objects it holds. */
function checkProperty(
  property: CompiledProperty,
  object: Record<string, unknown>,
  strict: boolean,
  args: ValidationArguments,
  withItems: boolean,
): ValidationProblem | null {
  const value = object[property.name];
  if (!holds(property, object, value)) return null;
  // Every failing constraint of the property is collected (class-validator reports them together and the most
  // basic one is named), then nested values are checked only when the property itself passed.
  let failures: Map<string, string> | undefined;
  args.property = property.name;
  args.value = value;
  for (const check of property.checks) {
    const { metadata, instance } = check;
    if (metadata.validateIf && !metadata.validateIf(object, value)) continue;
    args.constraints = metadata.constraints;
    if (
      passes(
        metadata.each && Array.isArray(value)
          ? () => everyItem(value, instance, args)
          : () => instance.validate(value, args),
      )
    )
      continue;
    // Keyed by constraint name, as class-validator's `constraints` object: a second failure of the same name
    // replaces the first one's message in the first one's place.
    (failures ??= new Map()).set(check.name, messageOf(check, args));
  }
  const nested = property.nested;
  if (nested && value !== undefined && !(value instanceof Object)) {
    (failures ??= new Map()).set(
      ValidationTypes.NESTED_VALIDATION,
      fillMessage(nested.message, {
        ...args,
        constraints: nested.constraints,
      }),
    );
  }
  if (failures) {
    const [name, message] = mostBasic(failures);
    return { path: [property.name], constraint: name, message };
  }
  if (!withItems || !nested || !property.nestedClass || value === undefined) return null;
  if (Array.isArray(value)) return checkItems(property, value, 0, value.length, strict);
  if (!isPlainObject(value)) return null;
  const problem = checkObject(property.nestedClass(), value, strict);
  return problem && { ...problem, path: [property.name, ...problem.path] };
}

/** Items `from` to `to` of an array of nested objects: each must be an object that passes the nested class. */
function checkItems(
  property: CompiledProperty,
  items: unknown[],
  from: number,
  to: number,
  strict: boolean,
): ValidationProblem | null {
  const nestedClass = property.nestedClass!();
  for (let i = from; i < to; i++) {
    const item = items[i];
    const problem = isPlainObject(item)
      ? checkObject(nestedClass, item, strict)
      : { path: [], constraint: ValidationTypes.NESTED_VALIDATION, message: 'must be an object' };
    if (problem) return { ...problem, path: [property.name, String(i), ...problem.path] };
  }
  return null;
}

/**
 * A validator that throws has refused the value: class-validator's own `isNumber` with `maxDecimalPlaces` throws on
 * a number written with an exponent (`1e-7`), which was a 500 on the admin API's budgets.
 */
function passes(check: () => unknown): boolean {
  try {
    return Boolean(check());
  } catch {
    return false;
  }
}

function everyItem(items: unknown[], instance: Check['instance'], args: ValidationArguments): boolean {
  for (const item of items) if (!instance.validate(item, args)) return false;
  return true;
}

/** class-validator's message for a failed constraint: the decorator's own, else the validator's default. */
function messageOf({ metadata, instance }: Check, args: ValidationArguments): string {
  const template =
    metadata.message ||
    (typeof instance.defaultMessage === 'function' ? instance.defaultMessage({ ...args }) : '');
  return fillMessage(template, { ...args });
}

/**
 * A message template filled as class-validator fills it (ValidationUtils.replaceMessageSpecialTokens, which it does
 * not export): a function is called, then $constraintN, $value (strings, numbers, booleans), $property, $target.
 */
function fillMessage(message: unknown, args: ValidationArguments): string {
  let text =
    typeof message === 'function'
      ? (message as (args: ValidationArguments) => string)(args)
      : typeof message === 'string'
        ? message
        : undefined;
  if (!text) return text ?? '';
  if (Array.isArray(args.constraints))
    args.constraints.forEach((constraint: unknown, i: number) => {
      text = text!.replace(new RegExp(`\\$constraint${i + 1}`, 'g'), constraintText(constraint));
    });
  const value: unknown = args.value;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    text = text.replace(/\$value/g, String(value));
  // Replacement strings, not functions, as class-validator passes them ("$&" in a value means what it means there).
  return text.replace(/\$property/g, args.property).replace(/\$target/g, args.targetName);
}

function constraintText(constraint: unknown): string {
  if (Array.isArray(constraint)) return constraint.join(', ');
  if (typeof constraint === 'symbol') return `${constraint.description}`;
  return `${constraint as string}`;
}

/** The failure to name: the first type check that failed, else the first failure (see TYPE_CONSTRAINTS). */
function mostBasic(failures: Map<string, string>): [string, string] {
  for (const name of TYPE_CONSTRAINTS) {
    const message = failures.get(name);
    if (message !== undefined) return [name, message];
  }
  return failures.entries().next().value as [string, string];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
