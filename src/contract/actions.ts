// Page actions (`actions` of a scrape): the wire fields of the v2 API (wire-names.md, "Actions").
// The browser engine runs them (src/scrape/engines/browser/actions.ts).
import { z } from 'zod';

export const PDF_FORMATS = ['A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'Letter', 'Legal', 'Tabloid', 'Ledger'] as const;

const viewport = z
  .object({ width: z.number().int().min(100).max(7680), height: z.number().int().min(100).max(7680) })
  .strict();
const selector = z.string().min(1).max(1000);

/** One action, validated (the API contract can use this schema as is). */
export const browserActionSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('wait'),
      milliseconds: z.number().int().min(1).max(60_000).optional(),
      selector: selector.optional(),
    })
    .strict()
    .refine((a) => (a.milliseconds === undefined) !== (a.selector === undefined), {
      message: 'wait needs exactly one of milliseconds or selector',
    }),
  z.object({ type: z.literal('click'), selector, all: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('write'), text: z.string().max(100_000) }).strict(),
  z.object({ type: z.literal('press'), key: z.string().min(1).max(100) }).strict(),
  z
    .object({ type: z.literal('scroll'), direction: z.enum(['up', 'down']).optional(), selector: selector.optional() })
    .strict(),
  z.object({ type: z.literal('scrape') }).strict(),
  z.object({ type: z.literal('executeJavascript'), script: z.string().min(1).max(1_000_000) }).strict(),
  z
    .object({
      type: z.literal('pdf'),
      format: z.enum(PDF_FORMATS).optional(),
      landscape: z.boolean().optional(),
      scale: z.number().min(0.1).max(2).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('screenshot'),
      fullPage: z.boolean().optional(),
      quality: z.number().int().min(0).max(100).optional(),
      viewport: viewport.optional(),
    })
    .strict(),
]);

export type BrowserAction = z.infer<typeof browserActionSchema>;
