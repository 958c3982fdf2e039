// Reading a model's JSON reply and checking it against the caller's JSON Schema (ajv, with
// formats). Compiled validators are cached by the schema's hash: a crawl extracts with the same
// schema on every page.
import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { LlmInvalidSchemaError } from '../errors.ts';

// ajv-formats is CommonJS with a default export: Node hands us module.exports, TypeScript the namespace.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

// strict: false: callers' schemas come from the wild (unknown keywords, `title` everywhere, etc.).
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, validateSchema: true }));

const CACHE_MAX = 200;
const validators = new Map<string, ValidateFunction>();

export type JsonSchema = Record<string, unknown>;

/** Any JSON object: what extractJson asks for without a schema. */
const anyObject: JsonSchema = { type: 'object' };

function schemaHash(schema: JsonSchema): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

/**
 * The compiled validator of `schema` (undefined: any JSON object), from the cache when seen
 * before. A schema ajv cannot compile is an LlmInvalidSchemaError.
 */
export function compileSchema(schema: JsonSchema | undefined): ValidateFunction {
  const s = schema ?? anyObject;
  const key = schemaHash(s);
  const hit = validators.get(key);
  if (hit) {
    // Refresh its place: the map's order is the eviction order.
    validators.delete(key);
    validators.set(key, hit);
    return hit;
  }
  let validate: ValidateFunction;
  try {
    // `$schema` names a draft ajv may not have loaded (2019-09, 2020-12); the keywords callers use
    // for extraction are the same in all of them. `$id` would clash between two compiles.
    const { $schema: _draft, $id: _id, ...body } = s;
    validate = ajv.compile(body);
  } catch (err) {
    throw new LlmInvalidSchemaError((err as Error).message);
  }
  validators.set(key, validate);
  if (validators.size > CACHE_MAX) validators.delete(validators.keys().next().value as string);
  return validate;
}

/** Why `schema` is not a usable JSON Schema, or null when it is (for request validation). */
export function checkJsonSchema(schema: JsonSchema): string | null {
  try {
    compileSchema(schema);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** ajv's errors as short lines: `/price: must be number`, `(root): must have required property 'name'`. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'}: ${e.message ?? 'invalid'}`);
}

export type ParsedReply = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * The JSON in a model's reply: the whole text, inside a ```json fence, or the outermost
 * {…} / […] when the model wrapped it in prose.
 */
export function parseJsonReply(text: string): ParsedReply {
  const trimmed = text.trim();
  if (!trimmed) return { ok: false, problem: 'the reply was empty' };
  const candidates = [trimmed];
  const fence = /```(?:json|JSON)?\s*\n?([\s\S]*?)\n?```/.exec(trimmed);
  if (fence) candidates.push(fence[1].trim());
  for (const [open, close] of [['{', '}'], ['[', ']']]) {
    const start = trimmed.indexOf(open);
    const end = trimmed.lastIndexOf(close);
    if (start >= 0 && end > start) candidates.push(trimmed.slice(start, end + 1));
  }
  let firstProblem = '';
  for (const c of candidates) {
    try {
      return { ok: true, value: JSON.parse(c) };
    } catch (err) {
      firstProblem ||= (err as Error).message;
    }
  }
  return { ok: false, problem: `the reply is not valid JSON (${firstProblem})` };
}

/** Parses and validates a reply: the value, or the problems to send back in a repair request. */
export function checkReply(text: string, schema: JsonSchema | undefined): { ok: true; value: unknown } | { ok: false; problems: string[] } {
  const parsed = parseJsonReply(text);
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] };
  const validate = compileSchema(schema);
  if (!validate(parsed.value)) return { ok: false, problems: describeErrors(validate.errors) };
  return { ok: true, value: parsed.value };
}
