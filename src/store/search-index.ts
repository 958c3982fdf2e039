// The own search index (table search_pages, migration 16; its queues search_queue for crawl pages,
// migration 18, and search_scrape_queue for stored scrapes, migration 20): what a stored page
// contributes to it, the SQL that writes it from the queues its record or storing statement fills
// (indexQueued, run in the background by src/store/search-indexer.ts and by a search for its team
// first) and the ranked query over it.
import type { Queryable } from './db-types.ts';

/** Characters of a page's markdown indexed at most: to_tsvector costs ~0.15–0.2 µs a character on PGlite. */
export const INDEXED_MARKDOWN_CHARS = 64_000;

/** A page's index entry, but for its markdown (taken from the stored document, never copied). */
export interface SearchEntry {
  /** Canonical URL (src/net/url-key.ts urlKey of the final URL): one row per team and key. */
  key: string;
  url: string;
  host: string;
  title: string;
  description: string;
  /** Text search configuration name (searchConfigFor); one Postgres lacks falls back to simple. */
  config: string;
}

// ISO 639-1 code → the text search configuration Postgres ships for that language.
const CONFIGS: Record<string, string> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  et: 'estonian',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hi: 'hindi',
  hu: 'hungarian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

/** The configuration for a page's language ("en-US", "de"…): its stemmer where Postgres has one, else simple. */
export function searchConfigFor(language: string | undefined): string {
  const code = language?.trim().toLowerCase().split(/[-_]/)[0];
  return (code && CONFIGS[code]) || 'simple';
}

/** SQL: the configuration named by `name` if this Postgres has it, else simple. */
export function configSql(name: string): string {
  return `COALESCE((SELECT c.oid::regconfig FROM pg_ts_config c WHERE c.cfgname = ${name} AND c.cfgnamespace = 'pg_catalog'::regnamespace), 'simple'::regconfig)`;
}

/** Pages ranked at most per query from each of the title/URL matches and the text matches (see searchIndex). */
export const RANKED_CANDIDATES = { head: 350, text: 200 };

/** SQL: the page's head vector (title A, URL words B). */
export function headSql(cfg: string, e: { title: string; url: string }): string {
  return (
    `setweight(to_tsvector(${cfg}, ${e.title}), 'A') || ` +
    // The URL's words: host labels and path segments ("docs example com getting started").
    `setweight(to_tsvector(${cfg}, regexp_replace(regexp_replace(${e.url}, '^[a-z]+://(www\\.)?', ''), '[^[:alnum:]]+', ' ', 'g')), 'B')`
  );
}

/** SQL: the page's whole vector, its head then description (C) and markdown (D). */
export function docSql(head: string, cfg: string, e: { description: string; markdown: string }): string {
  return (
    `${head} || setweight(to_tsvector(${cfg}, ${e.description}), 'C') || ` +
    `setweight(to_tsvector(${cfg}, left(${e.markdown}, ${INDEXED_MARKDOWN_CHARS})), 'D')`
  );
}

/**
 * SQL: the columns `config, head, doc` of a search_pages row, and the FROM items they need after
 * the caller's (`, <vectorsFrom>`): its configuration named by `config`, then the head vector once.
 */
export function vectorsSql(e: { config: string; title: string; url: string; description: string; markdown: string }): {
  columns: string;
  from: string;
} {
  return {
    columns: `g.cfg, hd.head, ${docSql('hd.head', 'g.cfg', e)}`,
    from:
      `CROSS JOIN LATERAL (SELECT ${configSql(e.config)} AS cfg) g ` +
      `CROSS JOIN LATERAL (SELECT ${headSql('g.cfg', e)} AS head) hd`,
  };
}

/** SQL after an INSERT into search_pages: the newest copy of a page replaces the stored one. */
export const UPSERT_SQL = `ON CONFLICT (team_id, url_key) DO UPDATE SET url = EXCLUDED.url, host = EXCLUDED.host,
  title = EXCLUDED.title, description = EXCLUDED.description, config = EXCLUDED.config, head = EXCLUDED.head,
  doc = EXCLUDED.doc, scraped_at = EXCLUDED.scraped_at, scrape_id = EXCLUDED.scrape_id, crawl_id = EXCLUDED.crawl_id,
  page_key = EXCLUDED.page_key
  WHERE search_pages.scraped_at <= EXCLUDED.scraped_at`;

export interface IndexQuery {
  teamId: string;
  /** The words, as typed (websearch syntax: "quoted phrase", -excluded, or). */
  text: string;
  limit: number;
  /** Hosts (lower-case, without www.) whose pages (their subdomains' too) are the only ones kept. */
  includeHosts?: string[];
  /** Hosts whose pages (their subdomains' too) are left out. */
  excludeHosts?: string[];
  /** Only pages scraped in this window. */
  since?: Date;
  until?: Date;
  /** Categories (src/search/filters.ts): pages on these hosts or, with categoryPdf, PDF URLs. */
  categoryHosts?: string[];
  categoryPdf?: boolean;
  /** Candidates ranked from the title/URL matches and from the text matches (default RANKED_CANDIDATES; the bench compares caps). */
  candidates?: { head: number; text: number };
  /** Also read each hit's stored markdown (its first INDEXED_MARKDOWN_CHARS characters): highlights. */
  withText?: boolean;
}

export interface IndexHit {
  url: string;
  title: string;
  description: string;
  scrapedAt: Date;
  rank: number;
  /** With withText: the markdown of the stored page the hit was indexed from (null: none). */
  markdown?: string | null;
}

/** Boosts added to ts_rank_cd: the whole query in the title, in the URL. */
const TITLE_BOOST = 1;
const URL_BOOST = 0.5;

const configLists = new WeakMap<Queryable, Promise<string[]>>();

/** The configurations of searchConfigFor this Postgres has, simple first (read once per database). */
function queryConfigs(db: Queryable): Promise<string[]> {
  let list = configLists.get(db);
  if (!list) {
    const wanted = ['simple', ...new Set(Object.values(CONFIGS))];
    list = db
      .query<{ name: string }>(
        `SELECT cfgname AS name FROM pg_ts_config WHERE cfgnamespace = 'pg_catalog'::regnamespace AND cfgname = ANY($1::text[])`,
        [wanted],
      )
      .then(({ rows }) => {
        const have = new Set(rows.map((r) => r.name));
        return wanted.filter((n) => have.has(n));
      });
    list.catch(() => configLists.delete(db));
    configLists.set(db, list);
  }
  return list;
}

/**
 * The query parsed in every configuration, forms that are the same once (OR-ed), as tsquery text;
 * empty when it holds no word. Pages are indexed in their own language's configuration: a stemmed
 * form meets the pages of its language, the simple form the others.
 */
async function queryForms(db: Queryable, text: string): Promise<string> {
  const { rows } = await db.query<{ q: string | null }>(
    `SELECT string_agg(DISTINCT '(' || q::text || ')', ' | ') AS q
     FROM (SELECT websearch_to_tsquery(c::regconfig, $1) AS q FROM unnest($2::text[]) AS c) t
     WHERE numnode(q) > 0`,
    [text, await queryConfigs(db)],
  );
  return rows[0]?.q ?? '';
}

/**
 * The team's pages matching the query, best first: ts_rank_cd over the weighted vector, plus a
 * boost when the title (weight A) or the URL (B) matches the whole query.
 */
export async function searchIndex(db: Queryable, q: IndexQuery): Promise<IndexHit[]> {
  // Two statements: the main one is planned with the actual tsquery (the GIN index, its selectivity).
  const tsquery = await queryForms(db, q.text);
  if (!tsquery) return [];
  const params: unknown[] = [q.teamId, tsquery, q.limit];
  const where: string[] = [];
  const add = (value: unknown) => `$${params.push(value)}`;
  const hostMatch = (hosts: string[]) => {
    const p = add(hosts);
    return `(host = ANY(${p}::text[]) OR EXISTS (SELECT 1 FROM unnest(${p}::text[]) d WHERE right(host, length(d) + 1) = '.' || d))`;
  };
  if (q.includeHosts?.length) where.push(hostMatch(q.includeHosts));
  if (q.excludeHosts?.length) where.push(`NOT ${hostMatch(q.excludeHosts)}`);
  if (q.since) where.push(`scraped_at >= ${add(q.since)}`);
  if (q.until) where.push(`scraped_at <= ${add(q.until)}`);
  if (q.categoryHosts !== undefined || q.categoryPdf) {
    const any = [q.categoryHosts?.length ? hostMatch(q.categoryHosts) : 'false'];
    if (q.categoryPdf) any.push(`url ~* '\\.pdf([?#]|$)'`);
    where.push(`(${any.join(' OR ')})`);
  }
  const filters = where.map((w) => ` AND ${w}`).join('');
  const cap = q.candidates ?? RANKED_CANDIDATES;
  // Every matching page is not ranked: a common word matches most of the index, and ranking reads
  // each candidate's whole vector. The candidates are the title/URL matches and the text matches,
  // RANKED_CANDIDATES of each (the first found): a page whose title or URL matches is ranked
  // unless that many others match there too.
  // Ranked in each branch: only the rows its LIMIT lets through are ranked (their vectors read once).
  const ranked = `SELECT url_key, url, title, description, scraped_at, crawl_id, page_key, scrape_id,
       ts_rank_cd(doc, $2::tsquery, 1)
         + CASE WHEN ts_filter(head, '{a}') @@ $2::tsquery THEN ${TITLE_BOOST} ELSE 0 END
         + CASE WHEN ts_filter(head, '{b}') @@ $2::tsquery THEN ${URL_BOOST} ELSE 0 END AS rank
     FROM search_pages WHERE team_id = $1`;
  // The hits' stored pages are read for the hits only (after the LIMIT): a crawl page's document,
  // or a stored scrape's (JSON text, read as json: no jsonb conversion).
  const text = q.withText
    ? `, (CASE WHEN h.crawl_id IS NOT NULL
          THEN (SELECT left(p.document->>'markdown', ${INDEXED_MARKDOWN_CHARS}) FROM crawl_pages p
                WHERE p.crawl_id = h.crawl_id AND p.url_key = COALESCE(h.page_key, h.url_key))
          ELSE (SELECT left(s.document::json->>'markdown', ${INDEXED_MARKDOWN_CHARS}) FROM scrape_results s
                WHERE s.job_id = h.scrape_id) END) AS markdown`
    : '';
  const { rows } = await db.query<IndexHit>(
    `SELECT h.url, h.title, h.description, h.scraped_at AS "scrapedAt", h.rank${text} FROM (
       SELECT * FROM (
         SELECT DISTINCT ON (url_key) * FROM (
           (${ranked} AND head @@ $2::tsquery${filters} LIMIT ${Math.max(1, Math.floor(cap.head))})
           UNION ALL
           (${ranked} AND doc @@ $2::tsquery${filters} LIMIT ${Math.max(1, Math.floor(cap.text))})
         ) c ORDER BY url_key
       ) d
       ORDER BY rank DESC, url
       LIMIT $3
     ) h
     ORDER BY h.rank DESC, h.url`,
    params,
  );
  return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
}

/** The vectors of a queued page (`src`: its entry and the markdown of its stored document). */
const queuedVectors = vectorsSql({
  config: "(src.entry->>'config')",
  title: "(src.entry->>'title')",
  url: "(src.entry->>'url')",
  description: "(src.entry->>'description')",
  markdown: "COALESCE(src.markdown, '')",
});

/**
 * Indexes up to `limit` queued crawl pages (search_queue) and up to `limit` queued stored scrapes
 * (search_scrape_queue), of one team with `teamId`, in one statement, and takes them off their
 * queues; resolves to how many left them. Rows another process is indexing are skipped, or with
 * `wait` waited for (they are gone once it returns). The markdown is read from the stored page:
 * a crawl page's document, a stored scrape's JSON text (read as json: no jsonb conversion).
 */
export async function indexQueued(
  db: Queryable,
  o: { limit: number; teamId?: string; wait?: boolean },
): Promise<number> {
  const team = o.teamId ? 'WHERE team_id = $2' : '';
  const lock = `FOR UPDATE ${o.wait ? '' : 'SKIP LOCKED'}`;
  const { rows } = await db.query<{ n: number }>(
    `WITH q AS (
       DELETE FROM search_queue s USING (SELECT crawl_id, page_key FROM search_queue ${team} LIMIT $1 ${lock}) pick
       WHERE s.crawl_id = pick.crawl_id AND s.page_key = pick.page_key
       RETURNING s.*
     ), qs AS (
       DELETE FROM search_scrape_queue s USING (SELECT job_id FROM search_scrape_queue ${team} LIMIT $1 ${lock}) pick
       WHERE s.job_id = pick.job_id
       RETURNING s.*
     ), src AS (
       SELECT q.team_id, q.entry, q.queued_at, q.crawl_id, q.page_key, NULL::uuid AS scrape_id,
              left(p.document->>'markdown', ${INDEXED_MARKDOWN_CHARS}) AS markdown
       FROM q JOIN crawl_pages p ON p.crawl_id = q.crawl_id AND p.url_key = q.page_key
       UNION ALL
       SELECT qs.team_id, qs.entry, qs.queued_at, NULL, NULL, qs.job_id,
              left(r.document::json->>'markdown', ${INDEXED_MARKDOWN_CHARS})
       FROM qs JOIN scrape_results r ON r.job_id = qs.job_id
     ), indexed AS (
       -- one row per team and canonical URL in a statement (two pages may redirect to one URL)
       INSERT INTO search_pages (team_id, url_key, url, host, title, description, config, head, doc, scraped_at, crawl_id, page_key, scrape_id)
       SELECT DISTINCT ON (src.team_id, src.entry->>'key') src.team_id, src.entry->>'key', src.entry->>'url', src.entry->>'host',
         src.entry->>'title', src.entry->>'description', ${queuedVectors.columns}, src.queued_at, src.crawl_id, src.page_key, src.scrape_id
       FROM src ${queuedVectors.from}
       ORDER BY src.team_id, src.entry->>'key', src.queued_at DESC
       ${UPSERT_SQL}
     )
     SELECT ((SELECT count(*) FROM q) + (SELECT count(*) FROM qs))::int AS n`,
    o.teamId ? [o.limit, o.teamId] : [o.limit],
  );
  return rows[0]?.n ?? 0;
}

/** Queued pages indexed per statement when a search catches up. */
const CATCH_UP_BATCH = 128;

/**
 * The team's queued crawl pages and stored scrapes indexed before it searches (what the background
 * step has not reached yet: a search right after a crawl or a scrape finds its pages), for at most
 * `budgetMs`; resolves to how many were indexed.
 */
export async function catchUpTeam(db: Queryable, teamId: string, budgetMs: number): Promise<number> {
  // Mostly there is none: a probe costs less than planning the indexing statement.
  const { rows } = await db.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM search_queue WHERE team_id = $1)
         OR EXISTS (SELECT 1 FROM search_scrape_queue WHERE team_id = $1) AS any`,
    [teamId],
  );
  if (!rows[0]?.any) return 0;
  const end = Date.now() + budgetMs;
  let total = 0;
  for (;;) {
    const n = await indexQueued(db, { limit: CATCH_UP_BATCH, teamId, wait: true });
    total += n;
    if (n === 0 || Date.now() >= end) return total;
  }
}
