import type { Db } from '../store/db-types.ts';
// Admission: URLs become queued pages of a crawl (crawl_pages rows the frontier claims), under a
// row lock on the crawl so `limit` is exact with any number of workers; and this process's
// frontiers are woken when pages are admitted here (docs/design/crawl.md).

/** A URL and its dedup key. */
export interface Link {
  url: string;
  key: string;
}

/** A URL offered for admission: its depth and the page it was found on. */
export interface Candidate extends Link {
  depth: number;
  parentKey: string | null;
}

// Frontiers of this process (src/crawl/frontier.ts), woken when pages are admitted here (by any
// Crawler of the process: the routes' and the workers').
const frontiers = new Set<() => void>();

/** Registers a frontier's wake-up; returns its removal. */
export function onAdmitted(wake: () => void): () => void {
  frontiers.add(wake);
  return () => frontiers.delete(wake);
}

export function wakeFrontiers(): void {
  for (const wake of frontiers) wake();
}

/**
 * Admits the candidates not seen before (in order, up to the crawl's remaining limit), under a
 * row lock on the crawl, as queued pages the frontier claims (available at once, or spaced by
 * the crawl's `delay`). Candidates may come from several parents (a batch of pages): each has
 * its depth and parent. With maxDiscoveryDepth, a known page found here at a smaller depth gets
 * that depth, and if it was already scraped its stored links are admitted again from there
 * (depth is the shortest link distance, whatever order the workers took the pages in).
 */
export async function admit(db: Db, crawlId: string, candidates: Candidate[]): Promise<void> {
  const best = new Map<string, Candidate>();
  for (const c of candidates) {
    const b = best.get(c.key);
    if (!b || c.depth < b.depth) best.set(c.key, c);
  }
  const unique = [...best.values()];
  if (unique.length === 0) return;
  const { admitted, lowered, maxDepth } = await db.transaction(async (tx) => {
    const { rows } = await tx.query<{
      status: string;
      room: number;
      delay: number | null;
      maxDepth: number | null;
      base: Date;
    }>(
      `SELECT status, page_limit - total AS room, (options->>'delay')::float8 AS delay, (options->>'maxDiscoveryDepth')::int AS "maxDepth",
              GREATEST(clock_timestamp(), COALESCE(next_start_at, clock_timestamp())) AS base
       FROM crawls WHERE id = $1 FOR UPDATE`,
      [crawlId],
    );
    const c = rows[0];
    const none = { admitted: 0, lowered: [], maxDepth: null };
    if (!c || c.status !== 'scraping') return none;
    const keys = unique.map((u) => u.key);
    let lowered: { key: string; depth: number; links: Link[] }[] = [];
    if (c.maxDepth !== null) {
      const { rows: low } = await tx.query<{ key: string; depth: number; status: string; links: Link[] | null }>(
        `UPDATE crawl_pages p SET depth = t.d FROM unnest($2::text[], $3::int[]) AS t(k, d)
         WHERE p.crawl_id = $1 AND p.url_key = t.k AND p.depth > t.d
         RETURNING p.url_key AS key, p.depth, p.status, p.links`,
        [crawlId, keys, unique.map((u) => u.depth)],
      );
      lowered = low
        .filter((l) => l.status === 'done' && l.links)
        .map((l) => ({ key: l.key, depth: l.depth, links: l.links! }));
    }
    if (c.room <= 0) return { admitted: 0, lowered, maxDepth: c.maxDepth };
    // Unseen candidates in order, at most `room` (the crawl row is locked: no one else admits
    // meanwhile); with a delay, each starts `delay` after the one before (next_start_at).
    const { rows: n } = await tx.query<{ n: number }>(
      `WITH ins AS (
         INSERT INTO crawl_pages (crawl_id, url_key, url, depth, parent_key, status, available_at)
         SELECT $1, k, u, d, pk, 'queued',
                CASE WHEN $6::float8 > 0 THEN $7::timestamptz + (row_number() OVER (ORDER BY o) - 1) * $6::float8 * interval '1 second'
                     ELSE clock_timestamp() END
         FROM unnest($2::text[], $3::text[], $4::int[], $5::text[]) WITH ORDINALITY AS t(k, u, d, pk, o)
         -- one index lookup per candidate (an anti-join could scan every crawl's pages)
         LEFT JOIN LATERAL (SELECT 1 AS seen FROM crawl_pages e WHERE e.crawl_id = $1 AND e.url_key = t.k LIMIT 1) e ON true
         WHERE e.seen IS NULL
         ORDER BY o LIMIT $8
         ON CONFLICT DO NOTHING RETURNING 1
       ), n AS (SELECT count(*)::int AS n FROM ins)
       UPDATE crawls SET total = total + n.n,
         next_start_at = CASE WHEN $6::float8 > 0 THEN $7::timestamptz + n.n * $6::float8 * interval '1 second' ELSE next_start_at END
       FROM n WHERE id = $1 RETURNING n.n`,
      [
        crawlId,
        keys,
        unique.map((u) => u.url),
        unique.map((u) => u.depth),
        unique.map((u) => u.parentKey),
        c.delay ?? 0,
        c.base,
        c.room,
      ],
    );
    return { admitted: n[0]?.n ?? 0, lowered, maxDepth: c.maxDepth };
  });
  if (admitted > 0) wakeFrontiers();
  if (maxDepth === null) return;
  const again = lowered
    .filter((l) => l.depth < maxDepth)
    .flatMap((l) => l.links.map((k) => ({ ...k, depth: l.depth + 1, parentKey: l.key })));
  if (again.length > 0) await admit(db, crawlId, again);
}
