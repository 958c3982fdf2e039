// Callers' JSON Schemas (the json and changeTracking formats, /v2/extract): one ajv instance, with
// formats, compiles them all. Compiled validators are cached by the schema's hash: a crawl extracts
// with the same schema on every page.
import { createHash } from 'node:crypto';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { compileRe2 } from './pattern.ts';

// ajv-formats is CommonJS with a default export: Node hands us module.exports, TypeScript the namespace.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

// `pattern` and `patternProperties` run on RE2 (linear time): a catastrophic pattern in a caller's
// schema must not stall the service. ajv passes the "u" flag; RE2 is Unicode-aware anyway.
// Lookaround and backreferences make the schema fail to compile (a 400 where it is checked).
const re2Engine = Object.assign((pattern: string) => compileRe2(pattern), { code: 're2js' });

// strict: false: callers' schemas come from the wild (unknown keywords, `title` everywhere, etc.).
const ajv = addFormats(
  new Ajv({
    allErrors: true,
    strict: false,
    validateSchema: true,
    validateFormats: true,
    code: { regExp: re2Engine },
  }),
);

const CACHE_MAX = 200;
const validators = new Map<string, ValidateFunction>();

/** The compiled validator of `schema`, from the cache when seen before; throws ajv's error when it does not compile. */
export function compileJsonSchema(schema: Record<string, unknown>): ValidateFunction {
  const key = createHash('sha256').update(JSON.stringify(schema)).digest('hex');
  const hit = validators.get(key);
  if (hit) {
    // Refresh its place: the map's order is the eviction order.
    validators.delete(key);
    validators.set(key, hit);
    return hit;
  }
  // `$schema` names a draft ajv may not have loaded (2019-09, 2020-12); the keywords callers use
  // for extraction are the same in all of them. `$id` would clash between two compiles.
  const { $schema: _draft, $id: _id, ...body } = schema;
  const validate = ajv.compile(body);
  validators.set(key, validate);
  if (validators.size > CACHE_MAX) validators.delete(validators.keys().next().value as string);
  return validate;
}
