// Reading a model's JSON reply and checking it against the caller's JSON Schema (compiled by
// src/contract/json-schema.ts).
import type { ErrorObject, ValidateFunction } from 'ajv';
import { compileJsonSchema } from '../contract/json-schema.ts';
import { LlmInvalidSchemaError } from '../errors.ts';

export type JsonSchema = Record<string, unknown>;

/** Any JSON object: what extractJson asks for without a schema. */
const anyObject: JsonSchema = { type: 'object' };

/**
 * The compiled validator of `schema` (undefined: any JSON object), from the cache when seen
 * before. A schema ajv cannot compile is an LlmInvalidSchemaError.
 */
export function compileSchema(schema: JsonSchema | undefined): ValidateFunction {
  try {
    return compileJsonSchema(schema ?? anyObject);
  } catch (err) {
    throw new LlmInvalidSchemaError((err as Error).message);
  }
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
  for (const [open, close] of [
    ['{', '}'],
    ['[', ']'],
  ]) {
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
export function checkReply(
  text: string,
  schema: JsonSchema | undefined,
): { ok: true; value: unknown } | { ok: false; problems: string[] } {
  const parsed = parseJsonReply(text);
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] };
  const validate = compileSchema(schema);
  if (!validate(parsed.value)) return { ok: false, problems: describeErrors(validate.errors) };
  return { ok: true, value: parsed.value };
}
