// The OpenAPI document, generated from the same zod schemas that validate requests, served at
// /v2/openapi.json, and a readable docs page (Swagger UI, assets bundled in the package) at /docs.
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import './types.ts';

const DOCS_PREFIX = '/docs';

export async function installOpenApi(app: FastifyInstance, version: string): Promise<void> {
  // The docs page's own routes need no key and are not part of the API document.
  app.addHook('onRoute', (route) => {
    if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) {
      route.config = { ...route.config, public: true };
      route.schema = { ...route.schema, hide: true };
    }
  });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Gleaner API',
        version,
        description:
          'Self-hostable content retrieval: web pages and documents to LLM-ready output. Wire-compatible with the ' +
          'Firecrawl v2 API. Every route but /health, /ready, /v2/openapi.json, /docs and the playground (/ and /playground/…) needs ' +
          '`Authorization: Bearer <key>`. Errors are `{success: false, code, error, details?}`; the Error schema ' +
          'lists every code with its HTTP status and meaning.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key of your team' } },
      },
      security: [{ bearerAuth: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: DOCS_PREFIX, uiConfig: { url: '/v2/openapi.json' } as object });
  app.get(
    '/v2/openapi.json',
    { config: { public: true }, schema: { tags: ['meta'], summary: 'This OpenAPI document', security: [] } },
    async () => app.swagger(),
  );
}
