// Schema migrations, applied in order at start-up. Append new ones; never edit an applied one.
// An advisory lock makes concurrent start-ups (several API and worker processes) apply each once.
import type { Db } from './db-types.ts';

interface Migration {
  id: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [
  {
    id: 1,
    name: 'teams, keys, jobs ledger, credits, tokens, rate limits',
    sql: `
      CREATE TABLE teams (
        id uuid PRIMARY KEY,
        name text NOT NULL UNIQUE,
        -- credits a team may spend per calendar month (UTC); NULL is unlimited
        credit_quota integer,
        webhook_secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );

      -- API keys are random 192-bit tokens, so a fast SHA-256 digest is as safe to store as a slow
      -- password hash and lets a request find its key by index.
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        name text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        key_preview text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        last_used_at timestamptz
      );
      CREATE INDEX api_keys_team ON api_keys (team_id);

      -- One row per API job of any kind; features keep their own details in their own tables.
      CREATE TABLE jobs (
        id uuid PRIMARY KEY,
        -- creation order, also across processes (one sequence): the activity listing's keyset
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        team_id uuid NOT NULL REFERENCES teams(id),
        api_key_id uuid REFERENCES api_keys(id),
        endpoint text NOT NULL,
        api_version text NOT NULL DEFAULT 'v2',
        status text NOT NULL,
        target text,
        credits integer NOT NULL DEFAULT 0,
        error text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        completed_at timestamptz
      );
      CREATE INDEX jobs_team_seq ON jobs (team_id, seq DESC);
      CREATE INDEX jobs_team_status ON jobs (team_id, status);

      CREATE TABLE credit_usage (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        api_key_id uuid REFERENCES api_keys(id),
        job_id uuid,
        credits integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX credit_usage_team_time ON credit_usage (team_id, created_at);

      CREATE TABLE token_usage (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        api_key_id uuid REFERENCES api_keys(id),
        job_id uuid,
        tokens integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX token_usage_team_time ON token_usage (team_id, created_at);

      -- Shape required by rate-limiter-flexible's Postgres store (shared by all processes).
      CREATE TABLE rate_limits (
        key varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      );
    `,
  },
  {
    id: 2,
    name: 'page cache and scrape results',
    sql: `
      -- The latest response per request variant (URL and whatever changes the output), shared by
      -- all teams: only public fetches are stored (no caller headers, cookies or actions).
      CREATE TABLE page_cache (
        cache_key text PRIMARY KEY,
        url text NOT NULL,
        final_url text NOT NULL,
        status_code integer NOT NULL,
        content_type text NOT NULL,
        headers jsonb NOT NULL,
        body bytea NOT NULL,
        fetched_at timestamptz NOT NULL
      );

      -- Finished scrape documents, read back by GET /v2/scrape/{id} (never under zero data retention).
      CREATE TABLE scrape_results (
        job_id uuid PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
        team_id uuid NOT NULL REFERENCES teams(id),
        document jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
    `,
  },
  {
    id: 3,
    name: 'stored files, browser profiles, cache engine',
    sql: `
      ALTER TABLE page_cache ADD COLUMN engine text NOT NULL DEFAULT 'http';

      -- Binary outputs served back by URL (screenshots, PDFs of actions). The id is a random
      -- 128-bit token: knowing it is the permission to read, as with a signed storage URL.
      CREATE TABLE stored_files (
        id text PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        job_id uuid REFERENCES jobs(id) ON DELETE CASCADE,
        content_type text NOT NULL,
        data bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX stored_files_expires ON stored_files (expires_at);

      -- Named persistent browser storage (cookies, localStorage, IndexedDB) per team.
      CREATE TABLE browser_profiles (
        team_id uuid NOT NULL REFERENCES teams(id),
        name text NOT NULL,
        state jsonb NOT NULL,
        version integer NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (team_id, name)
      );
    `,
  },
  {
    id: 4,
    name: 'page cache unlogged, large values stored uncompressed',
    sql: `
      -- Every fetched page is written to the cache and every scrape stores its document, often
      -- 100 KB+ each. Postgres's built-in pglz compression of such values cost more than the rest
      -- of a scrape on PGlite (WASM): store them as they are (EXTERNAL: out of line, uncompressed).
      ALTER TABLE page_cache ALTER COLUMN body SET STORAGE EXTERNAL;
      ALTER TABLE scrape_results ALTER COLUMN document SET STORAGE EXTERNAL;
      -- The cache is rebuilt by use: no write-ahead log for it (after a crash it starts empty).
      ALTER TABLE page_cache SET UNLOGGED;
    `,
  },
  {
    id: 5,
    name: 'crawls and their pages',
    sql: `
      -- One row per crawl (or batch scrape); id is its job id in the jobs ledger.
      CREATE TABLE crawls (
        id uuid PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
        team_id uuid NOT NULL REFERENCES teams(id),
        api_key_id uuid REFERENCES api_keys(id),
        kind text NOT NULL,
        url text NOT NULL,
        options jsonb NOT NULL,
        page_limit integer NOT NULL,
        -- base of the URLs of stored screenshots (PUBLIC_URL or the origin of the start request)
        public_url text NOT NULL,
        status text NOT NULL,
        -- sitemap seeding still to run: the crawl cannot be complete before it ends
        seeding boolean NOT NULL DEFAULT false,
        -- URLs admitted to the frontier (what limit counts), pages scraped, credits charged
        total integer NOT NULL DEFAULT 0,
        completed integer NOT NULL DEFAULT 0,
        credits_used integer NOT NULL DEFAULT 0,
        -- delay: the earliest time the next admitted page may start
        next_start_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        completed_at timestamptz,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX crawls_team_status ON crawls (team_id, status);
      CREATE INDEX crawls_expires ON crawls (expires_at);

      -- The frontier and visited set: a URL (by its dedup key) is admitted once per crawl, and
      -- only an admitted URL is ever sent to the queue.
      CREATE TABLE crawl_pages (
        crawl_id uuid NOT NULL REFERENCES crawls(id) ON DELETE CASCADE,
        url_key text NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        url text NOT NULL,
        depth integer NOT NULL,
        -- the page whose links admitted it (NULL: start URL or sitemap)
        parent_key text,
        status text NOT NULL,
        document jsonb,
        -- in-scope links found on the page [{url, key}], kept so a page later found at a smaller
        -- depth can have its links admitted at that depth (maxDiscoveryDepth stays exact)
        links jsonb,
        error text,
        code text,
        -- stable order for status pagination
        seq bigint GENERATED ALWAYS AS IDENTITY,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (crawl_id, url_key)
      );
      CREATE INDEX crawl_pages_status ON crawl_pages (crawl_id, status, seq);
      ALTER TABLE crawl_pages ALTER COLUMN document SET STORAGE EXTERNAL;
    `,
  },
  {
    id: 6,
    name: 'crawl webhooks and their delivery attempts',
    sql: `
      -- The request's webhook, normalised to {url, headers, metadata, events}; NULL: none.
      ALTER TABLE crawls ADD COLUMN webhook jsonb;

      -- One row per delivery attempt (retries and at-least-once re-runs included).
      CREATE TABLE webhook_deliveries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        job_id uuid NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        -- the event's id (payload webhookId), the same on every attempt
        webhook_id uuid NOT NULL,
        event text NOT NULL,
        url text NOT NULL,
        attempt integer NOT NULL,
        status_code integer,
        error text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        -- set when the receiver answered 2xx
        delivered_at timestamptz
      );
      CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id, id);
      CREATE INDEX webhook_deliveries_team_time ON webhook_deliveries (team_id, created_at);
    `,
  },
  {
    id: 7,
    name: 'per-host politeness: next allowed request start',
    sql: `
      -- One row per host crawled with a minimum interval (robots.txt Crawl-delay or
      -- GLEANER_HOST_MIN_INTERVAL_MS): the earliest time the next request may start, moved on by
      -- one atomic upsert per request (src/crawl/politeness.ts). Rebuilt by use: no write-ahead
      -- log (after a database crash it starts empty, which costs at most one early request per host).
      CREATE UNLOGGED TABLE host_politeness (
        host text PRIMARY KEY,
        next_at timestamptz NOT NULL
      );
    `,
  },
  {
    id: 8,
    name: 'idempotency keys of batch scrapes',
    sql: `
      -- A request's idempotency key, claimed before its job is created (job_id NULL until then),
      -- so a repeat returns the first request's job and two at once start only one.
      CREATE TABLE idempotency_keys (
        team_id uuid NOT NULL REFERENCES teams(id),
        key text NOT NULL,
        endpoint text NOT NULL,
        -- digest of the request body: the same key with another body is a 409
        request_hash text NOT NULL,
        job_id uuid REFERENCES jobs(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (team_id, key)
      );
      CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
    `,
  },
  {
    id: 9,
    name: 'crawl frontier: pages claimed from crawl_pages by lease',
    sql: `
      -- The frontier is the page queue (src/crawl/frontier.ts): a queued page is claimed by one
      -- process for lease_until (renewed while it runs; NULL or past: claimable), not before
      -- available_at (a crawl's delay, a politeness turn, a retry), at most a few attempts.
      ALTER TABLE crawl_pages
        ADD COLUMN available_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        ADD COLUMN lease_until timestamptz,
        ADD COLUMN attempts integer NOT NULL DEFAULT 0,
        -- a request start reserved for the page by per-host politeness (src/crawl/politeness.ts)
        ADD COLUMN slot timestamptz,
        -- recorded, its webhook page event not queued yet (queued again after a crash)
        ADD COLUMN event_pending boolean NOT NULL DEFAULT false;
      CREATE INDEX crawl_pages_event_pending ON crawl_pages (updated_at) WHERE event_pending;
      CREATE INDEX crawl_pages_claim ON crawl_pages (available_at, seq) WHERE status = 'queued';
      -- Room on each heap page for the claim's and the renewals' new row versions (HOT updates:
      -- no new index entries).
      ALTER TABLE crawl_pages SET (fillfactor = 70);
      -- Pages recorded (done, failed or blocked): the crawl may end when ended = total.
      ALTER TABLE crawls ADD COLUMN ended integer NOT NULL DEFAULT 0;
      UPDATE crawls c SET ended = (SELECT count(*) FROM crawl_pages p WHERE p.crawl_id = c.id AND p.status <> 'queued');
    `,
  },
  {
    id: 10,
    name: 'scrape results as JSON text',
    sql: `
      -- Stored documents are only ever read whole: JSON text is written ~5x faster than jsonb
      -- (a 200 KB page: ~1 ms instead of ~6 ms) and the reader parses it in one call.
      ALTER TABLE scrape_results ALTER COLUMN document TYPE text USING document::text;
      ALTER TABLE scrape_results ALTER COLUMN document SET STORAGE EXTERNAL;
    `,
  },
  {
    id: 11,
    name: 'change tracking snapshots',
    sql: `
      -- The changeTracking format's memory: per team, normalised URL and tag, the latest scrape's
      -- markdown (and extracted JSON) plus the one before it. A new scrape moves current to prev_*
      -- and writes itself as current in one upsert (src/store/changes.ts), so each scrape is
      -- compared with exactly one predecessor even when two run at once. Two per key, never more.
      CREATE TABLE change_snapshots (
        team_id uuid NOT NULL REFERENCES teams(id),
        url_key text NOT NULL,
        tag text NOT NULL DEFAULT '',
        markdown text NOT NULL,
        -- JSON text (the json mode's extraction), NULL when none was ever given
        json text,
        status_code integer NOT NULL,
        scraped_at timestamptz NOT NULL,
        prev_markdown text,
        prev_json text,
        prev_status_code integer,
        prev_scraped_at timestamptz,
        PRIMARY KEY (team_id, url_key, tag)
      );
    `,
  },
  {
    id: 12,
    name: 'extracts',
    sql: `
      -- POST /v2/extract (src/extract/extract.ts): one row per extract (id = its job id) holding the
      -- request and, once done, the result; readable for 24 h (expires_at), then swept.
      CREATE TABLE extracts (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        api_key_id uuid,
        request jsonb NOT NULL,
        public_url text NOT NULL,
        status text NOT NULL DEFAULT 'processing',
        data jsonb,
        error text,
        warning text,
        sources jsonb,
        tokens_used integer NOT NULL DEFAULT 0,
        credits_used integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX extracts_expires ON extracts (expires_at);
    `,
  },
  {
    id: 13,
    name: 'stored file chunks',
    sql: `
      -- Stored files' bytes in 1 MiB chunks (src/store/files.ts): a large media file is written from
      -- its temporary file and served back a chunk at a time, never held whole in memory. Files
      -- stored before keep their bytes in stored_files.data (size NULL) and are read the same way.
      CREATE TABLE stored_file_chunks (
        file_id text NOT NULL REFERENCES stored_files(id) ON DELETE CASCADE,
        n integer NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (file_id, n)
      );
      -- Images and media do not compress: storing them uncompressed saves the CPU and lets a
      -- range read fetch only its own TOAST chunks.
      ALTER TABLE stored_file_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
      ALTER TABLE stored_files ALTER COLUMN data DROP NOT NULL;
      ALTER TABLE stored_files ADD COLUMN size bigint;
    `,
  },
  {
    id: 14,
    name: 'monitors',
    sql: `
      -- Monitors (src/monitor/): a schedule and targets; each run is a check. Storage grows with
      -- change, not with checks: a page's content is kept once per distinct hash (monitor_contents),
      -- and a check records per page only a small row (status, hash, scrape ids, judgment and diff
      -- when it changed).
      CREATE TABLE monitors (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        api_key_id uuid,
        name text NOT NULL,
        -- active | paused
        status text NOT NULL DEFAULT 'active',
        cron text NOT NULL,
        timezone text NOT NULL,
        schedule_text text,
        targets jsonb NOT NULL,
        webhook jsonb,
        notification jsonb,
        retention_days integer NOT NULL,
        goal text,
        judge_enabled boolean NOT NULL,
        public_url text NOT NULL,
        estimated_credits_per_month integer,
        next_run_at timestamptz,
        last_run_at timestamptz,
        current_check_id uuid,
        last_check_summary jsonb,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX monitors_due ON monitors (next_run_at) WHERE status = 'active';
      CREATE INDEX monitors_team ON monitors (team_id, created_at);
      CREATE TABLE monitor_checks (
        id uuid PRIMARY KEY,
        monitor_id uuid NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
        team_id uuid NOT NULL,
        status text NOT NULL,
        -- scheduled | manual
        trigger text NOT NULL,
        scheduled_for timestamptz,
        started_at timestamptz,
        finished_at timestamptz,
        estimated_credits integer,
        reserved_credits integer,
        actual_credits integer,
        billing_status text NOT NULL DEFAULT 'not_applicable',
        summary jsonb,
        target_results jsonb,
        notification_status jsonb,
        error text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      -- Exactly one check per tick of a monitor, whichever process runs the tick.
      CREATE UNIQUE INDEX monitor_checks_tick ON monitor_checks (monitor_id, scheduled_for) WHERE trigger = 'scheduled';
      CREATE INDEX monitor_checks_monitor ON monitor_checks (monitor_id, created_at);
      -- The tick's look for checks whose job was never sent.
      CREATE INDEX monitor_checks_queued ON monitor_checks (created_at) WHERE status = 'queued';
      -- One row per page a target ever yielded: its current content hash (NULL when removed or never read)
      -- and the scrape that read it; written when the page is new, changed or removed, never for an
      -- unchanged page.
      CREATE TABLE monitor_pages (
        id uuid PRIMARY KEY,
        monitor_id uuid NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
        target_id text NOT NULL,
        url text NOT NULL,
        hash text,
        scrape_id uuid,
        -- set when the target stopped yielding the page (a check recorded it as removed)
        removed_at timestamptz,
        first_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        -- when the row was last written (new, changed, back after removal)
        last_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (monitor_id, target_id, url)
      );
      -- One row per page of a check, kept small (an unchanged page of a markdown monitor: ids, status,
      -- scrape ids and status code); hashes, diff and judgment only where the page changed. Its
      -- API id is derived from (check_id, seq).
      CREATE TABLE monitor_check_pages (
        check_id uuid NOT NULL REFERENCES monitor_checks(id) ON DELETE CASCADE,
        -- order within the check (pagination)
        seq integer NOT NULL,
        page_id uuid NOT NULL REFERENCES monitor_pages(id) ON DELETE CASCADE,
        status text NOT NULL,
        scrape_id uuid,
        prev_scrape_id uuid,
        status_code integer,
        hash text,
        prev_hash text,
        error text,
        judgment jsonb,
        diff jsonb,
        PRIMARY KEY (check_id, seq)
      );
      -- A page's content (markdown, or JSON text), once per distinct normalised hash.
      CREATE TABLE monitor_contents (
        monitor_id uuid NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
        hash text NOT NULL,
        content text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (monitor_id, hash)
      );
    `,
  },
  {
    id: 15,
    name: 'browser sessions',
    sql: `
      -- What a scrape needs to be replayed by POST /v2/scrape/{id}/interact (URL, headers, device,
      -- location, actions, profile): JSON text, written with the finished scrape, never under
      -- zero data retention. Read once per session; expired rows are pruned.
      CREATE TABLE scrape_replays (
        job_id uuid PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
        team_id uuid NOT NULL REFERENCES teams(id),
        replay text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX scrape_replays_created ON scrape_replays (created_at);

      -- Live and stopped browser sessions (src/interact/). kind 'interact' is bound to a scrape
      -- (scrape_job_id, one session per scrape, ever); kind 'browser' is standalone. The process
      -- holding the browser is \`instance\`; it renews \`seen_at\` while alive, so a session whose
      -- process died is found and closed by any other process.
      CREATE TABLE browser_sessions (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        api_key_id uuid,
        kind text NOT NULL,
        scrape_job_id uuid UNIQUE,
        status text NOT NULL DEFAULT 'active',
        instance text NOT NULL,
        stream_web_view boolean NOT NULL DEFAULT true,
        ttl_seconds integer,
        activity_ttl_seconds integer NOT NULL,
        cdp_url text NOT NULL,
        live_view_url text NOT NULL,
        interactive_live_view_url text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        last_activity timestamptz NOT NULL DEFAULT clock_timestamp(),
        seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz,
        ended_at timestamptz,
        end_reason text,
        duration_ms bigint,
        credits integer
      );
      CREATE INDEX browser_sessions_team ON browser_sessions (team_id, status, created_at DESC);
      CREATE INDEX browser_sessions_active ON browser_sessions (seen_at) WHERE status = 'active';
    `,
  },
  {
    id: 16,
    name: 'search index',
    sql: `
      -- The own search index (POST /v2/search, src/search/own-index.ts): one row per team and
      -- canonical URL of a page the team scraped or crawled (never under zero data retention), the
      -- newest copy winning. A row points at the data it was built from, a scrape's stored result
      -- or a crawl (exactly one), and is deleted with it (ON DELETE CASCADE): nothing indexed
      -- outlives its data. Only the tsvector is kept of the text; title, description and URL are
      -- what a hit shows.
      CREATE TABLE search_pages (
        team_id uuid NOT NULL REFERENCES teams(id),
        url_key text NOT NULL,
        url text NOT NULL,
        -- lower-cased, without "www.": includeDomains/excludeDomains
        host text NOT NULL,
        title text NOT NULL,
        description text NOT NULL,
        -- the text search configuration the page was indexed with (from its language, else simple)
        config regconfig NOT NULL,
        -- title (A) and URL words (B): small, read for every candidate (boosts), indexed on its own
        -- so that title and URL matches are always ranked, however many pages match in their text
        head tsvector NOT NULL,
        -- head, description (C), markdown (D)
        doc tsvector NOT NULL,
        scraped_at timestamptz NOT NULL,
        scrape_id uuid REFERENCES scrape_results(job_id) ON DELETE CASCADE,
        crawl_id uuid REFERENCES crawls(id) ON DELETE CASCADE,
        CHECK ((scrape_id IS NULL) <> (crawl_id IS NULL)),
        PRIMARY KEY (team_id, url_key)
      );
      CREATE INDEX search_pages_doc ON search_pages USING gin (doc);
      CREATE INDEX search_pages_head ON search_pages USING gin (head);
      -- Ranking reads every candidate's vector whole: uncompressed, it is read without pglz's cost.
      ALTER TABLE search_pages ALTER COLUMN doc SET STORAGE EXTERNAL;
      -- the cascades' lookups when a crawl or a stored scrape goes
      CREATE INDEX search_pages_crawl ON search_pages (crawl_id) WHERE crawl_id IS NOT NULL;
      CREATE INDEX search_pages_scrape ON search_pages (scrape_id) WHERE scrape_id IS NOT NULL;
    `,
  },
  {
    id: 17,
    name: 'agents',
    sql: `
      -- POST /v2/agent (src/agent/): one row per agent (id = its job id) holding the request, each
      -- tool use (actions, appended as they happen) and, once done, the answer; readable for 24 h
      -- (expires_at), then swept. credits_used sums the actions' credits (charged on their own jobs).
      CREATE TABLE agents (
        id uuid PRIMARY KEY,
        team_id uuid NOT NULL REFERENCES teams(id),
        api_key_id uuid NOT NULL,
        request jsonb NOT NULL,
        webhook jsonb,
        public_url text NOT NULL,
        status text NOT NULL DEFAULT 'processing',
        data jsonb,
        error text,
        warning text,
        model text,
        sources jsonb,
        actions jsonb NOT NULL DEFAULT '[]',
        credits_used integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        completed_at timestamptz,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX agents_team_created ON agents (team_id, created_at DESC);
      CREATE INDEX agents_expires ON agents (expires_at);
    `,
  },
  {
    id: 18,
    name: 'search index queue',
    sql: `
      -- Crawl and batch-scrape pages waiting for the own search index (src/store/search-index.ts):
      -- a page's record queues it, a throttled background step indexes the queue in batches (off
      -- the crawl's critical path) and a search first indexes its team's queued pages. The page's
      -- text is read from its crawl_pages row when it is indexed (a row whose page is gone is
      -- dropped unindexed); deleted with its crawl. (A foreign key to the crawl_pages row itself
      -- would cost ~0.2 ms a page on PGlite: it locks the row the same statement records.)
      CREATE TABLE search_queue (
        crawl_id uuid NOT NULL REFERENCES crawls(id) ON DELETE CASCADE,
        page_key text NOT NULL,
        team_id uuid NOT NULL,
        -- the page's entry (src/scrape/search-entry.ts): canonical URL, host, title, description, config
        entry jsonb NOT NULL,
        -- when the page was recorded: the index row's scraped_at
        queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (crawl_id, page_key)
      );
      -- a search's look for its team's queued pages (a probe, however many dead rows the queue holds)
      CREATE INDEX search_queue_team ON search_queue (team_id);
      -- A crawl page's own key (crawl_pages.url_key; its url_key is the canonical final URL's):
      -- a hit's highlight is read from the stored page.
      ALTER TABLE search_pages ADD COLUMN page_key text;
    `,
  },
  {
    id: 19,
    name: 'shared slots',
    sql: `
      -- Counting semaphores shared by the processes of one Postgres (src/store/shared-slots.ts): a
      -- team's jobs at once (key 'team:<id>') and requests to a host at once ('host:<host>'). A row
      -- is a slot held; its holder renews expires_at while it holds it, so the slots of a process
      -- that died free themselves. Rebuilt by use: no write-ahead log.
      CREATE UNLOGGED TABLE shared_slots (
        id uuid PRIMARY KEY,
        key text NOT NULL,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX shared_slots_key ON shared_slots (key);
    `,
  },
  {
    id: 20,
    name: 'search queue of stored scrapes; the claim index of crawl pages dropped',
    sql: `
      -- Stored scrapes waiting for the own search index, as crawl pages wait in search_queue: indexing
      -- a page (to_tsvector of up to 64,000 characters, ~15 ms on PGlite) is background work, not
      -- part of storing a scrape (src/store/search-indexer.ts).
      CREATE TABLE search_scrape_queue (
        job_id uuid PRIMARY KEY REFERENCES scrape_results(job_id) ON DELETE CASCADE,
        team_id uuid NOT NULL,
        entry jsonb NOT NULL,
        queued_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX search_scrape_queue_team ON search_scrape_queue (team_id);
      -- The frontier claims each crawl's queued pages through crawl_pages_status (crawl_id,
      -- status, seq) now; this index only cost writes.
      DROP INDEX crawl_pages_claim;
    `,
  },
];

const LOCK_KEY = 727_001; // arbitrary constant: "gleaner migrations"

export async function migrate(db: Db): Promise<number[]> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await tx.query<{ id: number }>('SELECT id FROM schema_migrations');
    const done = new Set(rows.map((r) => r.id));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
      applied.push(m.id);
    }
    return applied;
  });
}
