// Browser sessions: POST/DELETE /v2/scrape/{jobId}/interact (a session bound to a scrape) and
// /v2/browser (standalone sessions). Shapes from the spec ("Interact result", the session state
// machine) and wire-names.md ("Interact", "browser sessions").
import { z } from 'zod';
import { clientLabels } from './scrape.ts';

export const interactLanguages = ['node', 'python', 'bash'] as const;
export type InteractLanguage = (typeof interactLanguages)[number];

const timeout = z
  .number()
  .min(1)
  .max(300)
  .default(30)
  .describe('Seconds; the code is killed at the limit (killed: true)');

export const interactRequest = z
  .object({
    code: z.string().min(1).max(100_000).optional().describe('Runs in the session sandbox'),
    prompt: z.string().min(1).max(10_000).optional().describe('An AI agent performs the task in the browser'),
    // Clients send language "node" with a prompt too: accepted, and used only with code.
    language: z.enum(interactLanguages).default('node'),
    timeout,
    ...clientLabels,
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.code === undefined && v.prompt === undefined)
      ctx.addIssue({ code: 'custom', path: ['code'], message: 'one of code or prompt is required' });
    if (v.code !== undefined && v.prompt !== undefined)
      ctx.addIssue({ code: 'custom', path: ['prompt'], message: 'send code or prompt, not both' });
  })
  .meta({ id: 'InteractRequest' });
export type InteractRequest = z.infer<typeof interactRequest>;

export const browserExecuteRequest = z
  .object({
    code: z.string().min(1).max(100_000),
    language: z.enum(interactLanguages).default('bash'),
    timeout,
    ...clientLabels,
  })
  .strict()
  .meta({ id: 'BrowserExecuteRequest' });
export type BrowserExecuteRequest = z.infer<typeof browserExecuteRequest>;

const sessionUrls = {
  cdpUrl: z.string().describe('Chrome DevTools Protocol WebSocket URL of the session (the token in it is the key)'),
  liveViewUrl: z.string().describe('Read-only live view of the session'),
  interactiveLiveViewUrl: z.string().describe('Live view that forwards mouse and keyboard'),
};

export const interactResult = z
  .object({
    success: z.boolean().describe('Whether the execution completed without errors'),
    ...sessionUrls,
    output: z.string().optional().describe("The AI agent's final answer (prompt only)"),
    stdout: z.string(),
    result: z.string().describe('Last expression value (node), final page snapshot (prompt), else stdout'),
    stderr: z.string(),
    exitCode: z.number().int(),
    killed: z.boolean().describe('True when the timeout ended the code'),
    truncated: z.boolean().optional().describe('stdout or stderr was cut at the output cap'),
    error: z.string().optional(),
  })
  .meta({ id: 'InteractResult' });
export type InteractResult = z.infer<typeof interactResult>;

export const sessionEndResponse = z
  .object({
    success: z.literal(true),
    status: z.literal('destroyed'),
    sessionDurationMs: z.number().int(),
    creditsBilled: z.number().int(),
  })
  .meta({ id: 'BrowserSessionEnd' });

export const browserCreateRequest = z
  .object({
    ttl: z.number().int().min(30).max(3600).default(600).describe('Total lifetime in seconds'),
    activityTtl: z
      .number()
      .int()
      .min(10)
      .max(3600)
      .default(300)
      .describe('Seconds without a call before the session is destroyed'),
    streamWebView: z.boolean().default(true).describe('Offer the live view'),
    profile: z
      .object({ name: z.string().min(1).max(128), saveChanges: z.boolean().default(true) })
      .strict()
      .optional()
      .describe('Persistent storage shared by sessions (and scrapes) naming the same profile'),
    ...clientLabels,
  })
  .strict()
  .meta({ id: 'BrowserCreateRequest' });
export type BrowserCreateRequest = z.infer<typeof browserCreateRequest>;

export const browserCreateResponse = z
  .object({ success: z.literal(true), id: z.string(), ...sessionUrls, expiresAt: z.string() })
  .meta({ id: 'BrowserCreateResponse' });

export const browserSessionView = z
  .object({
    id: z.string(),
    status: z.enum(['active', 'destroyed']),
    ...sessionUrls,
    streamWebView: z.boolean(),
    createdAt: z.string(),
    lastActivity: z.string(),
  })
  .meta({ id: 'BrowserSession' });

export const browserListQuery = z.object({ status: z.enum(['active', 'destroyed']).optional() }).strict();
export const browserListResponse = z.object({ success: z.literal(true), sessions: z.array(browserSessionView) });
