// Shapes shared by every route of the v2 wire format.
import { z } from 'zod';
import { errorCodes, httpErrorCodes } from '../errors.ts';

/** Every code an answer can carry, with its status and meaning, from the registry (src/errors.ts). */
const errorCodeDescription = [
  'Stable machine-readable error code (also listed in docs/errors.md), with its HTTP status:',
  '',
  ...httpErrorCodes.map((code) => `- ${code} (${errorCodes[code].status}): ${errorCodes[code].meaning}`),
].join('\n');

export const errorBody = z
  .object({
    success: z.literal(false),
    code: z.enum(httpErrorCodes).describe(errorCodeDescription),
    error: z.string().describe('Human-readable explanation'),
    details: z.unknown().optional().describe('Validation issues: [{path, message}], path naming the field'),
  })
  .meta({ id: 'Error' });

/** Error responses every authenticated route can give. */
export const authErrors = {
  400: errorBody,
  401: errorBody,
  429: errorBody,
  500: errorBody,
} as const;

/** Query-string booleans: clients send `true`/`false` (and sometimes 1/0). */
export const queryBoolean = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const uuidParam = z.uuid();

/** The endpoints whose jobs the ledger records (activity listing, credit usage). */
export const jobEndpoints = [
  'scrape',
  'crawl',
  'batch_scrape',
  'search',
  'extract',
  'llmstxt',
  'deep_research',
  'map',
  'agent',
  'browser',
  'interact',
  'parse',
  'monitor',
] as const;
export type JobEndpoint = (typeof jobEndpoints)[number];
