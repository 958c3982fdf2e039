// Reading JSON replies and validating them against callers' schemas.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkJsonSchema, checkReply, compileSchema, parseJsonReply } from '../../src/llm/json.ts';

test('replies: plain, fenced, wrapped in prose; empty and broken ones say why', () => {
  assert.deepEqual(parseJsonReply(' {"a":1} '), { ok: true, value: { a: 1 } });
  assert.deepEqual(parseJsonReply('```json\n{"a":1}\n```'), { ok: true, value: { a: 1 } });
  assert.deepEqual(parseJsonReply('```\n[1,2]\n```'), { ok: true, value: [1, 2] });
  assert.deepEqual(parseJsonReply('Sure! {"a": {"b": 2}} Done.'), { ok: true, value: { a: { b: 2 } } });
  assert.deepEqual(parseJsonReply('  '), { ok: false, problem: 'the reply was empty' });
  const broken = parseJsonReply('{"a": 1,');
  assert.equal(broken.ok, false);
  assert.match((broken as { problem: string }).problem, /not valid JSON/);
});

test('validation: formats, problems by path, any object without a schema', () => {
  const schema = {
    type: 'object',
    properties: { email: { type: 'string', format: 'email' }, n: { type: 'integer' } },
    required: ['n'],
  };
  assert.deepEqual(checkReply('{"email":"a@b.example","n":2}', schema), {
    ok: true,
    value: { email: 'a@b.example', n: 2 },
  });
  const bad = checkReply('{"email":"nope","n":2.5}', schema);
  assert.equal(bad.ok, false);
  assert.deepEqual((bad as { problems: string[] }).problems.sort(), [
    '/email: must match format "email"',
    '/n: must be integer',
  ]);
  assert.deepEqual(checkReply('{"x":1}', undefined), { ok: true, value: { x: 1 } });
  assert.equal(checkReply('[1]', undefined).ok, false);
});

test('schemas: compiled once per content, a draft 2020-12 $schema is accepted, nonsense is named', () => {
  const s = { type: 'object', properties: { a: { type: 'string' } } };
  assert.equal(compileSchema(s), compileSchema(JSON.parse(JSON.stringify(s))), 'cached by content');
  assert.equal(
    checkJsonSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'x', type: 'object' }),
    null,
  );
  assert.equal(
    checkJsonSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'x', type: 'object' }),
    null,
    'twice: no $id clash',
  );
  assert.match(checkJsonSchema({ type: 'nonsense' }) ?? '', /JSON Schema is invalid/);
});

test('JSON Schema patterns run on RE2: `(a+)+$` on a 50,000-character value answers quickly; lookaround is refused', () => {
  const validate = compileSchema({
    type: 'object',
    properties: { slug: { type: 'string', pattern: '(a+)+$' } },
    patternProperties: { '^x-(a+)+$': { type: 'number' } },
  });
  const started = performance.now();
  assert.equal(validate({ slug: `${'a'.repeat(50_000)}!` }), false);
  assert.equal(validate({ slug: 'a'.repeat(50_000) }), true);
  assert.equal(validate({ slug: 'aa', [`x-${'a'.repeat(50_000)}!`]: 'not checked' }), true);
  const ms = performance.now() - started;
  assert.ok(ms < 1000, `took ${ms} ms`);
  assert.equal(validate({ slug: 'aa', 'x-aaa': 'text' }), false);
  assert.match(checkJsonSchema({ type: 'string', pattern: '(?<=a)b' }) ?? '', /RE2/);
  assert.match(checkJsonSchema({ type: 'string', pattern: '(x)\\1' }) ?? '', /RE2/);
  assert.equal(checkJsonSchema({ type: 'string', pattern: '^[a-z]+\\d{2}$' }), null);
});
