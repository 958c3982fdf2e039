// POST /v2/scrape: the request (every field of the spec's table, names from wire-names.md) and
// the Scrape document it returns. Options a later part of Gleaner adds are refused by name
// (`unsupported` below), never accepted and ignored.
import { z } from 'zod';
import { describeErrorCodes } from '../errors.ts';
import { browserActionSchema } from './actions.ts';

export const DEFAULT_MAX_AGE_MS = 172_800_000; // 2 days
export const LOCKDOWN_MAX_AGE_MS = 2 * 365 * 24 * 60 * 60 * 1000; // 2 years

/** Fields every JSON body may carry: SDK and integration labels. */
export const clientLabels = {
  origin: z.string().max(200).optional().describe('Client label, e.g. js-sdk@4.0.0'),
  integration: z.string().max(200).optional(),
};

/** A URL to fetch: http(s) only; a bare host name gets https://. */
export const targetUrl = z
  .string()
  .trim()
  .min(1)
  .max(8192)
  .transform((s) => (/^[a-z][a-z0-9+.-]*:/i.test(s) ? s : `https://${s}`))
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }));

const simpleFormats = [
  'markdown',
  'html',
  'rawHtml',
  'rawBase64',
  'links',
  'images',
  'screenshot',
  'summary',
  'json',
  'changeTracking',
  'branding',
  'product',
  'menu',
  'audio',
  'video',
  'attributes',
] as const;

const viewport = z
  .object({ width: z.number().int().min(100).max(7680), height: z.number().int().min(100).max(7680) })
  .strict();

const formatObject = z.discriminatedUnion('type', [
  z
    .object({
      type: z.enum([
        'markdown',
        'html',
        'rawHtml',
        'rawBase64',
        'links',
        'images',
        'summary',
        'product',
        'menu',
        'branding',
        'audio',
        'video',
      ]),
    })
    .strict(),
  z
    .object({
      type: z.literal('json'),
      schema: z.record(z.string(), z.unknown()).optional(),
      prompt: z.string().max(10_000).optional(),
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
  z
    .object({
      type: z.literal('changeTracking'),
      modes: z.array(z.enum(['git-diff', 'json'])).optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      prompt: z.string().max(10_000).optional(),
      tag: z.string().max(200).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('attributes'),
      selectors: z
        .array(z.object({ selector: z.string().min(1).max(1000), attribute: z.string().min(1).max(200) }).strict())
        .min(1)
        .max(100),
    })
    .strict(),
  z.object({ type: z.literal('question'), question: z.string().min(1).max(10_000) }).strict(),
  z.object({ type: z.literal('highlights'), query: z.string().min(1).max(10_000) }).strict(),
  z
    .object({
      type: z.literal('query'),
      prompt: z.string().min(1).max(10_000),
      mode: z.enum(['freeform', 'directQuote']).optional(),
    })
    .strict(),
]);

export const scrapeFormat = z.union([z.enum(simpleFormats), formatObject]);
export type ScrapeFormatInput = z.infer<typeof scrapeFormat>;

const pdfParser = z
  .object({
    type: z.literal('pdf'),
    mode: z.enum(['fast', 'auto', 'ocr']).optional(),
    maxPages: z.number().int().min(1).max(10_000).optional(),
    pages: z.boolean().optional(),
    blocks: z.boolean().optional(),
    pageMarkers: z.boolean().optional(),
  })
  .strict();

// Headers sent to the target: a name must be an HTTP token and a value HTTP field text (no CR, LF,
// NUL, nothing past U+00FF), and the connection's own headers are the client's to set. Anything
// else makes the HTTP client refuse the request, which would read as the site failing (502).
const connectionHeaders = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'expect']);
const targetHeaders = z.record(
  z
    .string()
    .min(1)
    .max(200)
    .regex(/^[!#$%&'*+.^`|~\w-]+$/, "a header name is letters, digits and !#$%&'*+-.^_`|~ only")
    .refine((name) => !connectionHeaders.has(name.toLowerCase()), 'the connection headers cannot be set'),
  z
    .string()
    .max(8192)
    .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'a header value cannot have control characters or characters past U+00FF'),
);

const redactEntities = ['PERSON', 'EMAIL', 'PHONE', 'LOCATION', 'FINANCIAL', 'SECRET'] as const;
export const redactOptions = z
  .object({
    mode: z.enum(['accurate', 'aggressive', 'fast']).optional(),
    entities: z.array(z.enum(redactEntities)).min(1).optional(),
    replaceStyle: z.enum(['tag', 'mask', 'remove']).optional(),
  })
  .strict();

/** Scrape options shared by scrape, batch scrape and crawl `scrapeOptions`. */
export const scrapeOptionsShape = {
  formats: z.array(scrapeFormat).max(20).optional().describe('Output formats; default ["markdown"]'),
  onlyMainContent: z.boolean().default(true),
  onlyCleanContent: z.boolean().default(false),
  includeTags: z.array(z.string().min(1).max(1000)).max(100).optional().describe('CSS selectors of the parts to keep'),
  excludeTags: z.array(z.string().min(1).max(1000)).max(100).optional().describe('CSS selectors of the parts to drop'),
  maxAge: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(`Serve a cached copy younger than this (ms); default ${DEFAULT_MAX_AGE_MS}, 2 years under lockdown`),
  minAge: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      'Cache only: the cached copy must be at least this old (ms); no copy gives ' +
        describeErrorCodes(['SCRAPE_NO_CACHED_DATA']),
    ),
  headers: targetHeaders.optional(),
  waitFor: z.number().int().min(0).max(60_000).default(0),
  mobile: z.boolean().default(false),
  skipTlsVerification: z.boolean().default(true),
  timeout: z.number().int().min(1000).max(300_000).default(60_000).describe('ms'),
  parsers: z.array(z.union([z.literal('pdf'), pdfParser, z.object({ type: z.literal('image') }).strict()])).optional(),
  actions: z
    .array(browserActionSchema)
    .max(50)
    .optional()
    .describe('Run in the browser, in order, before the content is read'),
  location: z
    .object({
      country: z
        .string()
        .regex(/^[A-Za-z]{2}$/)
        .default('US'),
      languages: z.array(z.string().min(2).max(35)).max(20).optional(),
    })
    .strict()
    .optional(),
  removeBase64Images: z.boolean().default(true),
  blockAds: z.boolean().default(true),
  proxy: z.enum(['basic', 'enhanced', 'auto', 'stealth']).default('auto'),
  storeInCache: z.boolean().default(true),
  lockdown: z.boolean().default(false),
  redactPII: z.union([z.boolean(), redactOptions]).default(false),
  profile: z
    .object({ name: z.string().min(1).max(200), saveChanges: z.boolean().optional() })
    .strict()
    .optional(),
  zeroDataRetention: z.boolean().default(false),
  fastMode: z
    .boolean()
    .optional()
    .describe(
      'true: an HTTP answer that looks rendered by JavaScript is returned as served (with a warning), not rendered in the browser',
    ),
  checkPromptInjection: z
    .boolean()
    .optional()
    .describe('Accepted from newer SDKs: a Firecrawl cloud check Gleaner does not have; true is named in `warning`'),
  domainTools: z
    .unknown()
    .optional()
    .describe("Accepted from newer SDKs: Firecrawl's hosted tool registry; named in `warning`"),
  toolDetail: z.unknown().optional().describe('Accepted from newer SDKs (see domainTools); named in `warning`'),
};

export const scrapeRequest = z
  .object({ url: targetUrl.describe('The page to scrape'), ...scrapeOptionsShape, ...clientLabels })
  .strict()
  .meta({ id: 'ScrapeRequest' });
export type ScrapeRequest = z.infer<typeof scrapeRequest>;

export const metadata = z
  .object({
    title: z.string().optional(),
    description: z.string().optional(),
    language: z.string().optional(),
    keywords: z.string().optional(),
    ogLocaleAlternate: z.array(z.string()).optional(),
    sourceURL: z.string().optional(),
    url: z.string().optional(),
    statusCode: z.number().int().optional(),
    contentType: z.string().optional(),
    scrapeId: z.string().optional(),
    numPages: z.number().int().optional(),
    error: z.string().optional(),
    concurrencyLimited: z.boolean().optional(),
    concurrencyQueueDurationMs: z.number().int().optional(),
    proxyUsed: z.string().optional(),
    cacheState: z.enum(['hit', 'miss']).optional(),
    cachedAt: z.string().optional(),
    creditsUsed: z.number().optional(),
    engine: z.string().optional(),
  })
  .catchall(z.union([z.string(), z.array(z.string()), z.number(), z.boolean()]))
  .meta({ id: 'ScrapeMetadata' });

/** Layout of one page of a document (src/documents/types.ts DocumentBlock). */
const documentBlock = z.object({
  pageNumber: z.number(),
  width: z.number(),
  height: z.number(),
  status: z.string(),
  items: z.array(
    z.object({
      id: z.string(),
      type: z.string(),
      label: z.string(),
      bbox: z.array(z.number()),
      content: z.string(),
      markdownSpan: z.array(z.number()),
      readingOrder: z.number(),
      source: z.string(),
      confidence: z.object({ layout: z.number(), ocr: z.number() }),
    }),
  ),
});

const price = z
  .object({ amount: z.number(), currency: z.string().optional(), formatted: z.string().optional() })
  .meta({ id: 'Price' });
const imageRef = z.object({ url: z.string(), alt: z.string().optional() });
const availability = z.object({ inStock: z.boolean(), text: z.string() });

export const productOutput = z
  .object({
    title: z.string().optional(),
    url: z.string().optional(),
    variants: z.array(
      z.object({
        availability: availability.optional(),
        id: z.string().optional(),
        sku: z.string().optional(),
        title: z.string().optional(),
        values: z.record(z.string(), z.string()).optional(),
        price: price.optional(),
        sale: z.object({ originalPrice: price }).optional(),
        images: z.array(imageRef).optional(),
      }),
    ),
    brand: z.string().optional(),
    category: z.string().optional(),
    description: z.string().optional(),
  })
  .meta({ id: 'Product' });

export const menuOutput = z
  .object({
    isMenu: z.boolean(),
    sections: z.array(
      z.object({
        name: z.string(),
        items: z.array(
          z.object({
            name: z.string(),
            id: z.string().optional(),
            description: z.string().optional(),
            images: z.array(imageRef).optional(),
            price: price.optional(),
            availability: availability.optional(),
            dietary: z.array(z.string()).optional(),
            calories: z.number().optional(),
            optionGroups: z.array(z.record(z.string(), z.unknown())).optional(),
            identifiers: z.object({ merchantItemId: z.string() }).optional(),
            url: z.string().optional(),
            sourceUrl: z.string().optional(),
          }),
        ),
        id: z.string().optional(),
        description: z.string().optional(),
      }),
    ),
    confidence: z.number(),
    merchant: z.object({ name: z.string(), type: z.string() }).optional(),
    currency: z.string().optional(),
    sourceUrl: z.string().optional(),
  })
  .meta({ id: 'Menu' });

const changeTrackingOutput = z
  .object({
    previousScrapeAt: z
      .string()
      .nullable()
      .describe("This team's previous scrape of the URL (per tag); null for the first"),
    changeStatus: z.enum(['new', 'same', 'changed', 'removed']),
    visibility: z.enum(['visible', 'hidden']),
    diff: z
      .string()
      .optional()
      .describe('mode git-diff: unified diff of the markdown, previous → current (empty when the same)'),
    json: z
      .record(z.string(), z.object({ previous: z.unknown(), current: z.unknown() }))
      .optional()
      .describe('mode json: fields whose value changed'),
  })
  .meta({ id: 'ChangeTracking' });

const styleRecord = z.object({}).loose();
const colorNames = [
  'primary',
  'secondary',
  'accent',
  'background',
  'textPrimary',
  'textSecondary',
  'link',
  'success',
  'warning',
  'error',
] as const;
const brandingOutput = z
  .object({
    colorScheme: z.string().optional(),
    logo: z.string().optional(),
    colors: styleRecord.optional().describe(`Hex colours: ${colorNames.join(', ')}`),
    fonts: z.array(z.object({ family: z.string() }).loose()).optional(),
    typography: styleRecord.optional(),
    spacing: styleRecord.optional(),
    components: styleRecord.optional(),
    icons: styleRecord.optional(),
    images: styleRecord.optional().describe('logo, favicon, ogImage URLs'),
    animations: styleRecord.optional(),
    layout: styleRecord.optional(),
    personality: styleRecord.optional(),
  })
  .loose()
  .meta({ id: 'Branding' });

export const scrapeDocument = z
  .object({
    markdown: z.string().optional(),
    summary: z.string().optional(),
    json: z.unknown().optional().describe('format json: data for the schema and/or prompt'),
    answer: z.string().optional().describe('format question (or the deprecated query)'),
    highlights: z.string().optional().describe('format highlights: passages separated by blank lines'),
    product: productOutput.optional(),
    menu: menuOutput.optional(),
    changeTracking: changeTrackingOutput.optional(),
    branding: brandingOutput.optional().describe("format branding: from the rendered page's computed styles"),
    html: z.string().optional(),
    rawHtml: z.string().optional(),
    rawBase64: z.string().optional(),
    pages: z
      .array(z.object({ pageNumber: z.number().int(), markdown: z.string() }))
      .optional()
      .describe(
        'Per-page markdown of a document: PDF pages, slides, sheets (by default on POST /v2/parse; parsers [{type: "pdf", pages: true}] on a scrape)',
      ),
    blocks: z
      .array(documentBlock)
      .optional()
      .describe(
        'Layout items per page of a PDF (by default on POST /v2/parse; parsers [{type: "pdf", blocks: true}] on a scrape)',
      ),
    links: z.array(z.string()).optional(),
    images: z.array(z.string()).optional(),
    attributes: z
      .array(z.object({ selector: z.string(), attribute: z.string(), values: z.array(z.string()) }))
      .optional(),
    screenshot: z.string().optional().describe('URL of the stored image (a data: URL under zero data retention)'),
    video: z
      .string()
      .optional()
      .describe(
        'format video: URL of the stored media file (GET /v2/files/{id}, Range requests supported; the file as served, or an MP4 assembled from HLS/DASH); a data: URL under zero data retention. metadata.videoSourceURL, videoMimeType, videoSize (bytes), videoDuration (seconds)',
      ),
    audio: z
      .string()
      .optional()
      .describe(
        "format audio: URL of the stored MP3 of the media's audio track (an <audio> first, else the video's); a data: URL under zero data retention. metadata.audioSourceURL, audioMimeType, audioSize, audioDuration",
      ),
    actions: z
      .object({
        screenshots: z.array(z.string()),
        scrapes: z.array(z.object({ url: z.string(), html: z.string() })),
        javascriptReturns: z.array(z.object({ type: z.string(), value: z.unknown() })),
        pdfs: z.array(z.string()),
      })
      .optional(),
    metadata,
    warning: z.string().optional(),
  })
  .meta({ id: 'ScrapeDocument' });
export type ScrapeDocument = z.infer<typeof scrapeDocument>;

export const scrapeResponse = z.object({
  success: z.literal(true),
  data: scrapeDocument,
  warning: z.string().optional(),
});
