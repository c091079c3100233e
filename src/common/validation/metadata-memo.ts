import { getMetadataStorage, type MetadataStorage } from 'class-validator';

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

let installed = false;

/**
 * class-validator works out the validation metadata of a class again for every object it validates: it filters
 * the class's own decorators and then tests the class against every class that has decorators anywhere in the
 * process (`instanceof`, to collect inherited ones), then groups the result by property. A chat request is
 * several objects (the body, each message, nested parts), and the gateway has over a hundred decorated classes
 * (the config schema, the admin DTOs), so under load this lookup was a quarter of validation's CPU (~30 us per
 * request in bench/profile.mjs). The answer only changes when a decorator registers new metadata, so it is
 * remembered per class and options, and forgotten whenever metadata is added. Lookups with validation groups
 * (the gateway uses none) are not remembered.
 */
export function memoizeValidationMetadata(): void {
  if (installed) return;
  installed = true;
  const storage = getMetadataStorage();
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  let lookups = new Map<Parameters<typeof lookup>[0], Map<string, ValidationMetadata[]>>();
  let groupings = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();
  const forget = () => {
    lookups = new Map();
    groupings = new WeakMap();
  };

  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (groups?.length) return lookup(target, schema, always, strictGroups, groups);
    let byOptions = lookups.get(target);
    if (!byOptions) lookups.set(target, (byOptions = new Map()));
    const key = `${schema}|${always}|${strictGroups}`;
    let found = byOptions.get(key);
    if (!found) byOptions.set(key, (found = lookup(target, schema, always, strictGroups, groups)));
    return found;
  };
  storage.groupByPropertyName = (metadata) => {
    let grouped = groupings.get(metadata);
    if (!grouped) groupings.set(metadata, (grouped = group(metadata)));
    return grouped;
  };
  const addValidation = storage.addValidationMetadata.bind(storage);
  storage.addValidationMetadata = (metadata) => {
    forget();
    addValidation(metadata);
  };
  const addConstraint = storage.addConstraintMetadata.bind(storage);
  storage.addConstraintMetadata = (metadata) => {
    forget();
    addConstraint(metadata);
  };
}
