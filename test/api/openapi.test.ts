// /v2/openapi.json is a valid OpenAPI 3.x document that lists every route the server has,
// and /docs is a readable page that needs no key.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { apiClient } from '../helpers/api.ts';
import { type TestService, startTestService } from '../helpers/service.ts';
import { errorCodes, httpErrorCodes } from '../../src/errors.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(() => svc.destroy());

/** Every METHOD /path the server routes, read from Fastify's route tree (HEAD and the docs page's assets left out). */
function serverRoutes(): string[] {
  const tree = svc.app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (\S+) \(([^)]+)\)/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    const path = stack.join('');
    if (path.startsWith('/docs')) continue;
    for (const method of m[3].split(',').map((s) => s.trim())) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes.sort();
}

test('the OpenAPI document validates and lists every route', async () => {
  const res = await apiClient({ url: svc.url })('GET', '/v2/openapi.json');
  assert.equal(res.status, 200);
  const doc = res.json;
  assert.match(doc.openapi, /^3\./);
  await SwaggerParser.validate(structuredClone(doc));

  const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`))
    .sort();
  const routes = serverRoutes();
  assert.ok(routes.length >= 10, routes.join('\n'));
  assert.deepEqual(documented, routes);

  const activity = doc.paths['/v2/team/activity'].get;
  assert.deepEqual(activity.parameters.map((p: { name: string }) => p.name).sort(), ['cursor', 'endpoint', 'limit']);
  assert.ok(doc.components.securitySchemes.bearerAuth);
  assert.deepEqual(doc.paths['/health'].get.security, [], 'public routes say they need no key');
});

test('the docs page is served without a key', async () => {
  const page = await fetch(`${svc.url}/docs`, { redirect: 'follow' });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /swagger/i);
});

test('error codes from the registry: the Error schema lists each, routes name them with their status', async () => {
  const doc = (await apiClient({ url: svc.url })('GET', '/v2/openapi.json')).json;
  const code = doc.components.schemas.Error.properties.code;
  assert.deepEqual(code.enum, httpErrorCodes);
  for (const c of httpErrorCodes) assert.ok(code.description.includes(`- ${c} (${errorCodes[c].status}): `), c);
  let named = 0;
  const paths = doc.paths as Record<string, Record<string, { description?: string; responses?: object }>>;
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const statuses = Object.keys(op.responses ?? {});
      const documentsErrors = statuses.some((s) => Number(s) >= 400);
      for (const [, status, name] of (op.description ?? '').matchAll(/\b(\d{3}) ([A-Z][A-Z0-9_]{2,})\b/g)) {
        named++;
        const where = `${method.toUpperCase()} ${path} names ${status} ${name}`;
        const registered = errorCodes[name as keyof typeof errorCodes]?.status;
        assert.equal(registered, Number(status), `${where}: not so in the registry`);
        if (documentsErrors) assert.ok(statuses.includes(status), `${where} but no ${status} response`);
      }
    }
  }
  assert.ok(named >= 30, `only ${named} codes named in route descriptions`);
});
