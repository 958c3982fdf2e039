// POST /v2/parse: the `options` part (the scrape options that apply to an upload, from
// scrapeOptionsShape) and the parse response's document (the Scrape document plus the (P) fields:
// pages, blocks, rawBase64, metadata.provider).
import { z } from 'zod';
import { clientLabels, metadata, scrapeDocument, scrapeOptionsShape } from './scrape.ts';

const s = scrapeOptionsShape;

/** Options named by the spec for an upload, validated strictly (unknown keys are a 400 naming them). */
export const parseOptions = z
  .object({
    formats: s.formats,
    onlyMainContent: s.onlyMainContent,
    includeTags: s.includeTags,
    excludeTags: s.excludeTags,
    headers: s.headers,
    timeout: s.timeout,
    parsers: s.parsers,
    skipTlsVerification: s.skipTlsVerification,
    removeBase64Images: s.removeBase64Images,
    blockAds: s.blockAds,
    redactPII: s.redactPII,
    zeroDataRetention: s.zeroDataRetention,
    // Browser-only options: recognised so that the answer is PARSE_UNSUPPORTED_OPTIONS, not an unknown key.
    actions: z.unknown().optional(),
    waitFor: z.unknown().optional(),
    location: z.unknown().optional(),
    mobile: z.unknown().optional(),
    ...clientLabels,
  })
  .strict();
export type ParseOptionsInput = z.infer<typeof parseOptions>;

const provider = z.object({
  id: z.string().describe('gleaner-<kind>, e.g. gleaner-pdf'),
  creditsCost: z.number(),
  steps: z.array(
    z.object({
      provider: z.string().describe('text-layer, ocr, docx, xlsx, html, base64…'),
      status: z.string(),
      creditsCost: z.number(),
    }),
  ),
});

export const parseMetadata = metadata
  .extend({ provider: provider.optional(), author: z.string().optional() })
  .meta({ id: 'ParseMetadata' });

export const parseDocumentSchema = scrapeDocument.extend({ metadata: parseMetadata }).meta({ id: 'ParseDocument' });
export type ParseDocumentOutput = z.infer<typeof parseDocumentSchema>;

export const parseResponse = z.object({
  success: z.literal(true),
  data: parseDocumentSchema,
  warning: z.string().optional(),
});
