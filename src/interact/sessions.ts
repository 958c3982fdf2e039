// Browser sessions: the state machine of the spec ("Browser session bound to a scrape job") and
// the standalone sessions of /v2/browser, on one machinery.
//
//   no session --POST interact--> live (created at the scrape's page state, then the call runs)
//   live --POST interact / execute--> live (the same browser, calls one at a time)
//   live --DELETE, idle for activityTtl, past ttl, shutdown--> destroyed (billed, profile saved)
//   destroyed --POST--> 410
//
// The live browser is held by this process (`#live`); the row in browser_sessions is what every
// process agrees on. A session is billed 2 credits per minute of its life, prorated by the second,
// when it ends; an idle session is billed until the moment it expired.
import { randomUUID } from 'node:crypto';
import { ensureCredits, createBillableJob, creditCosts } from '../billing/credits.ts';
import type { BrowserCreateRequest, InteractLanguage, InteractRequest, InteractResult } from '../contract/interact.ts';
import {
  ApiError,
  ConflictError,
  ForbiddenError,
  InteractPromptTimeoutError,
  NotFoundError,
  ScrapeError,
} from '../errors.ts';
import type { ScrapeReplay } from '../scrape/replay.ts';
import type { AdBlocker } from '../scrape/engines/browser/adblock.ts';
import type { StorageState } from '../scrape/engines/browser.ts';
import {
  type BrowserSessionKind,
  type BrowserSessionRow,
  type SessionEndReason,
  endBrowserSession,
  getBrowserSession,
  getSessionOfScrape,
  insertBrowserSession,
  listBrowserSessions,
  lostBrowserSessions,
  pruneScrapeReplays,
  readScrapeReplay,
  renewBrowserSessions,
  touchBrowserSession,
} from '../store/browser-sessions.ts';
import type { Db } from '../store/db-types.ts';
import { getJobOwner, updateJob } from '../store/jobs.ts';
import { readProfile, saveProfile } from '../store/profiles.ts';
import type { Caller } from '../store/teams.ts';
import type { LiveBrowser } from './live-browser.ts';
import type { Sandbox, SandboxResult } from './sandbox/sandbox.ts';
import type { SessionTokenSet } from './session-tokens.ts';
import { openAtReplay } from './replay.ts';
import { DEFAULT_DEVICE, type SessionBrowser, type SessionDevice, type SessionLauncher } from './session-browser.ts';

/** What runs a caller's code against a session's browser: the sandbox (src/interact/sandbox/). */
export type CodeRunner = Pick<Sandbox, 'run' | 'close'>;
/** What runs a prompt (src/interact/prompt-agent.ts): the agent's answer and the final snapshot. */
export type PromptRunner = (req: {
  browser: LiveBrowser;
  prompt: string;
  timeoutMs: number;
  usage: { teamId: string; apiKeyId: string | null; jobId: string };
}) => Promise<{ output: string; result: string; finished: boolean; url: string }>;

export interface SessionUrls {
  cdpUrl: string;
  liveViewUrl: string;
  interactiveLiveViewUrl: string;
}

export interface BrowserSessionsOptions {
  db: Db;
  /** Launches session browsers; a spare comes with its code runner already started. */
  launcher: SessionLauncher<CodeRunner>;
  /** Starts a session's code runner (the sandbox) for its browser. */
  startRunner: (browser: LiveBrowser, sessionId: string) => Promise<CodeRunner>;
  runPrompt: PromptRunner;
  /** New random secrets for a session. */
  makeAccess: () => SessionTokenSet;
  /** The URLs callers get, from the base URL (PUBLIC_URL or the request's origin). */
  urlsOf: (baseUrl: string, id: string, access: SessionTokenSet) => SessionUrls;
  adblocker?: () => Promise<AdBlocker>;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Live sessions per team (429 above). */
  perTeam: number;
  /** Live sessions per process, whatever the team (429 above): each is a Chromium. */
  perProcess: number;
  /** Idle time after which an interact session ends (ms). */
  interactIdleMs: number;
  /** How long a scrape stays replayable (ms). */
  replayTtlMs: number;
  /** Sessions opened at once (Chromium launch, replay, sandbox start); more wait their turn. */
  openConcurrency: number;
  /** Sweep period for expiry (ms). Default 1000. */
  sweepMs?: number;
  /** Period of this process's sign of life on its sessions (ms); lost after 3 missed. Default 30 s. */
  renewMs?: number;
}

interface LiveSession {
  id: string;
  kind: BrowserSessionKind;
  caller: Pick<Caller, 'teamId' | 'keyId'>;
  browser: SessionBrowser;
  access: SessionTokenSet;
  urls: SessionUrls;
  startedAt: number;
  lastActivity: number;
  activityTtlMs: number;
  /** Absolute end (ttl), epoch ms. */
  endsAt: number | undefined;
  streamWebView: boolean;
  profile: { name: string; save: boolean } | undefined;
  runner: Promise<CodeRunner> | undefined;
  /** Calls in flight: the idle clock does not run while a call does. */
  busy: number;
  /** Calls run one at a time on the session. */
  tail: Promise<unknown>;
  ending: Promise<StoppedSession> | undefined;
}

export interface StoppedSession {
  sessionDurationMs: number;
  creditsBilled: number;
}

/** Credits for a session's life: 2 per minute, prorated by the second (whole credits, rounded up). */
export function sessionCredits(durationMs: number): number {
  const seconds = Math.ceil(Math.max(0, durationMs) / 1000);
  return Math.ceil((seconds * creditCosts.browserMinute) / 60);
}

export class BrowserSessions {
  /** This process, as recorded on the sessions it holds. */
  readonly instance = randomUUID();
  readonly #o: BrowserSessionsOptions;
  readonly #live = new Map<string, LiveSession>();
  /** First POSTs of an interact session being created, by scrape id (a second one waits for it). */
  readonly #creating = new Map<string, Promise<LiveSession>>();
  /** Sessions being opened now, and those waiting their turn (see #openSlot). */
  #openingNow = 0;
  readonly #openQueue: (() => void)[] = [];
  #sweeper: NodeJS.Timeout | undefined;
  #renewer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: BrowserSessionsOptions) {
    this.#o = opts;
  }

  start(): void {
    this.#sweeper = setInterval(() => void this.#sweep(), this.#o.sweepMs ?? 1000);
    this.#sweeper.unref();
    const renewMs = this.#o.renewMs ?? 30_000;
    this.#renewer = setInterval(() => void this.#renew(renewMs), renewMs);
    this.#renewer.unref();
  }

  /**
   * The live session this process holds, for the CDP proxy and the live view (no team check: the
   * URL's token is the permission). `hold` keeps it from idling out while a CDP client is connected.
   */
  lookup(
    id: string,
  ): { browser: LiveBrowser; tokens: SessionTokenSet; liveView: boolean; hold: () => () => void } | undefined {
    const s = this.#live.get(id);
    if (!s || s.ending) return undefined;
    const hold = () => {
      s.busy++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        s.busy--;
        s.lastActivity = Date.now();
      };
    };
    return { browser: s.browser, tokens: s.access, liveView: s.streamWebView, hold };
  }

  // ---- POST/DELETE /v2/scrape/{jobId}/interact

  async interact(caller: Caller, jobId: string, req: InteractRequest, baseUrl: string): Promise<InteractResult> {
    const session = await this.#interactSession(caller, jobId, baseUrl, req.code !== undefined);
    return this.#call(
      session,
      req.prompt !== undefined ? { prompt: req.prompt } : { code: req.code!, language: req.language },
      req.timeout,
    );
  }

  async stopInteract(caller: Caller, jobId: string): Promise<StoppedSession> {
    const row = await getSessionOfScrape(this.#o.db, jobId);
    if (!row) {
      const owner = await getJobOwner(this.#o.db, jobId);
      if (owner && owner !== caller.teamId)
        throw new ForbiddenError('Forbidden: this scrape job belongs to another team');
      throw new NotFoundError(`No browser session for scrape job ${jobId}`, 'BROWSER_SESSION_NOT_FOUND');
    }
    return this.#stop(caller, row);
  }

  // ---- /v2/browser

  async create(
    caller: Caller,
    req: BrowserCreateRequest,
    baseUrl: string,
  ): Promise<{ id: string; urls: SessionUrls; expiresAt: Date }> {
    const s = await this.#open(caller, {
      kind: 'browser',
      scrapeJobId: null,
      target: null,
      baseUrl,
      ttlSeconds: req.ttl,
      activityTtlSeconds: req.activityTtl,
      streamWebView: req.streamWebView,
      profile: req.profile && { name: req.profile.name, save: req.profile.saveChanges },
      device: DEFAULT_DEVICE,
      replay: undefined,
      eagerRunner: true,
    });
    return { id: s.id, urls: s.urls, expiresAt: new Date(s.endsAt!) };
  }

  async execute(
    caller: Caller,
    id: string,
    req: { code: string; language: InteractLanguage; timeout: number },
  ): Promise<InteractResult> {
    const row = await getBrowserSession(this.#o.db, id);
    if (!row || row.kind !== 'browser')
      throw new NotFoundError(`No browser session ${id}`, 'BROWSER_SESSION_NOT_FOUND');
    const s = this.#held(caller, row);
    return this.#call(s, { code: req.code, language: req.language }, req.timeout);
  }

  async delete(caller: Caller, id: string): Promise<StoppedSession> {
    const row = await getBrowserSession(this.#o.db, id);
    if (!row || row.kind !== 'browser')
      throw new NotFoundError(`No browser session ${id}`, 'BROWSER_SESSION_NOT_FOUND');
    return this.#stop(caller, row);
  }

  async list(caller: Caller, status: 'active' | 'destroyed' | undefined): Promise<BrowserSessionRow[]> {
    return listBrowserSessions(this.#o.db, caller.teamId, status, 100);
  }

  /** Ends every session this process holds (billed up to now), and the spares. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    clearInterval(this.#renewer);
    await Promise.all([...this.#live.values()].map((s) => this.#end(s, 'shutdown', Date.now())));
    await this.#o.launcher.close();
  }

  // ---- internals

  async #interactSession(caller: Caller, jobId: string, baseUrl: string, eagerRunner: boolean): Promise<LiveSession> {
    const creating = this.#creating.get(jobId);
    if (creating) {
      const s = await creating;
      if (s.caller.teamId !== caller.teamId)
        throw new ForbiddenError('Forbidden: this scrape job belongs to another team');
      return s;
    }
    const row = await getSessionOfScrape(this.#o.db, jobId);
    if (row) return this.#held(caller, row);
    const owner = await getJobOwner(this.#o.db, jobId);
    if (!owner) throw new NotFoundError(`No scrape job ${jobId}`, 'BROWSER_SESSION_NOT_FOUND');
    if (owner !== caller.teamId) throw new ForbiddenError('Forbidden: this scrape job belongs to another team');
    const kept = await readScrapeReplay(this.#o.db, caller.teamId, jobId);
    if (!kept)
      throw new ConflictError(
        `Scrape ${jobId} cannot be replayed in a browser session: it ran with zero data retention or lockdown, ` +
          'failed, or is still running.',
        'INTERACT_REPLAY_UNAVAILABLE',
      );
    if (Date.now() - kept.createdAt.getTime() > this.#o.replayTtlMs)
      throw new ConflictError(
        `Scrape ${jobId} can no longer be replayed: scrapes are replayable for ${Math.round(this.#o.replayTtlMs / 3_600_000)} h.`,
        'INTERACT_REPLAY_UNAVAILABLE',
      );
    const replay = kept.replay as ScrapeReplay;
    const opening = this.#open(caller, {
      kind: 'interact',
      scrapeJobId: jobId,
      target: replay.url,
      baseUrl,
      ttlSeconds: null,
      activityTtlSeconds: Math.round(this.#o.interactIdleMs / 1000),
      streamWebView: true,
      profile: replay.profile && { name: replay.profile.name, save: replay.profile.saveChanges !== false },
      device: {
        mobile: replay.mobile,
        location: replay.location,
        headers: replay.headers,
        skipTlsVerification: replay.skipTlsVerification,
      },
      replay,
      eagerRunner,
    });
    this.#creating.set(jobId, opening);
    try {
      return await opening;
    } finally {
      this.#creating.delete(jobId);
    }
  }

  /** The live session of a row: 403 another team's, 410 ended, 503 held by another process. */
  #held(caller: Caller, row: BrowserSessionRow): LiveSession {
    if (row.teamId !== caller.teamId)
      throw new ForbiddenError('Forbidden: this browser session belongs to another team');
    const s = this.#live.get(row.id);
    if (row.status === 'destroyed' || s?.ending || (!s && row.instance === this.instance))
      throw new ApiError(
        'BROWSER_SESSION_DESTROYED',
        `Browser session ${row.id} was stopped (${row.endReason ?? 'ended'}).`,
      );
    if (!s)
      throw new ApiError(
        'BROWSER_SESSION_ELSEWHERE',
        `Browser session ${row.id} is held by another API process; send its requests to the process that created it.`,
      );
    return s;
  }

  async #open(
    caller: Caller,
    o: {
      kind: BrowserSessionKind;
      scrapeJobId: string | null;
      target: string | null;
      baseUrl: string;
      ttlSeconds: number | null;
      activityTtlSeconds: number;
      streamWebView: boolean;
      profile: { name: string; save: boolean } | undefined;
      device: SessionDevice;
      replay: ScrapeReplay | undefined;
      /** Start the code sandbox alongside the replay (the first call runs code). */
      eagerRunner: boolean;
    },
  ): Promise<LiveSession> {
    if (this.#closed) throw new ApiError('INTERACT_EXECUTION_FAILED', 'The server is shutting down.');
    const { db } = this.#o;
    if (this.#live.size >= this.#o.perProcess)
      throw new ApiError(
        'BROWSER_SESSION_LIMIT',
        `This server runs its maximum of ${this.#o.perProcess} browser sessions (BROWSER_SESSIONS_MAX); stop one first.`,
      );
    // One minute of browser time must be affordable to start (402); the session's job is its ledger row.
    const id = randomUUID();
    await ensureCredits(db, caller.teamId, creditCosts.browserMinute);
    await createBillableJob(
      db,
      { id, teamId: caller.teamId, apiKeyId: caller.keyId, endpoint: o.kind, status: 'active', target: o.target },
      creditCosts.browserMinute,
    );
    const access = this.#o.makeAccess();
    const urls = this.#o.urlsOf(o.baseUrl, id, access);
    let row: BrowserSessionRow | undefined;
    try {
      row = await insertBrowserSession(
        db,
        {
          id,
          teamId: caller.teamId,
          apiKeyId: caller.keyId,
          kind: o.kind,
          scrapeJobId: o.scrapeJobId,
          instance: this.instance,
          streamWebView: o.streamWebView,
          ttlSeconds: o.ttlSeconds,
          activityTtlSeconds: o.activityTtlSeconds,
          ...urls,
        },
        this.#o.perTeam,
      );
    } catch (err) {
      await updateJob(db, id, { status: 'failed', error: 'BROWSER_SESSION_BUSY' }).catch(() => undefined);
      // Another process created this scrape's session at the same moment.
      if ((err as { code?: string }).code === '23505')
        throw new ConflictError(
          'A browser session for this scrape is being created by another request.',
          'BROWSER_SESSION_BUSY',
        );
      throw err;
    }
    if (!row) {
      await updateJob(db, id, { status: 'failed', error: 'BROWSER_SESSION_LIMIT' });
      throw new ApiError(
        'BROWSER_SESSION_LIMIT',
        `The team has its maximum of ${this.#o.perTeam} live browser sessions (BROWSER_SESSIONS_PER_TEAM); stop one first.`,
      );
    }
    const startedAt = row.createdAt.getTime();
    let browser: SessionBrowser | undefined;
    let runner: Promise<CodeRunner> | undefined;
    // Opening is CPU-bound (Chromium and the sandbox start): a few at a time finish sooner than
    // all at once, and none runs past its start-up timeouts.
    const done = await this.#openSlot();
    try {
      const launched = await this.#o.launcher.launch(o.device);
      browser = launched.browser;
      runner = launched.prepared;
      // Otherwise the sandbox starts while the page is replayed: its start-up is most of a first call's wait.
      if (!runner && o.eagerRunner) {
        runner = this.#o.startRunner(browser, id);
        runner.catch(() => undefined);
      }
      const profileState = o.profile ? (await readProfile(db, caller.teamId, o.profile.name))?.state : undefined;
      await openAtReplay(browser, o.replay, {
        device: o.device,
        storageState: profileState as StorageState | undefined,
        blocker: o.replay?.blockAds && this.#o.adblocker ? await this.#o.adblocker() : undefined,
      });
    } catch (err) {
      await runner?.then((r) => r.close()).catch(() => undefined);
      await browser?.close();
      await endBrowserSession(db, id, { reason: 'failed', endedAt: new Date(), durationMs: 0, credits: 0 });
      throw err instanceof ApiError
        ? err
        : new ApiError(
            'INTERACT_EXECUTION_FAILED',
            `The browser session could not be opened: ${(err as Error).message}`,
          );
    } finally {
      // The slot is held until the sandbox is up too (its start is the other CPU-heavy part).
      if (runner) runner.then(done, done);
      else done();
    }
    const now = Date.now();
    const s: LiveSession = {
      id,
      kind: o.kind,
      caller: { teamId: caller.teamId, keyId: caller.keyId },
      browser,
      access,
      urls,
      startedAt,
      lastActivity: now,
      activityTtlMs: o.activityTtlSeconds * 1000,
      endsAt: o.ttlSeconds === null ? undefined : startedAt + o.ttlSeconds * 1000,
      streamWebView: o.streamWebView,
      profile: o.profile,
      runner,
      busy: 0,
      tail: Promise.resolve(),
      ending: undefined,
    };
    this.#live.set(id, s);
    browser.context.on('close', () => {
      if (!s.ending) void this.#end(s, 'failed', Date.now());
    });
    return s;
  }

  async #openSlot(): Promise<() => void> {
    if (this.#openingNow >= this.#o.openConcurrency) await new Promise<void>((r) => this.#openQueue.push(r));
    this.#openingNow++;
    return () => {
      this.#openingNow--;
      this.#openQueue.shift()?.();
    };
  }

  #call(
    s: LiveSession,
    what: { prompt: string } | { code: string; language: InteractLanguage },
    timeoutSeconds: number,
  ): Promise<InteractResult> {
    s.busy++;
    const run = s.tail.then(async () => {
      // The session's time so far (billed when it ends) and a little more must still be affordable.
      await ensureCredits(this.#o.db, s.caller.teamId, sessionCredits(Date.now() - s.startedAt) + 1);
      return this.#run(s, what, timeoutSeconds * 1000);
    });
    s.tail = run.catch(() => undefined);
    return run.finally(() => {
      s.busy--;
      s.lastActivity = Date.now();
      void touchBrowserSession(this.#o.db, s.id, new Date(s.lastActivity)).catch(() => undefined);
    });
  }

  async #run(
    s: LiveSession,
    what: { prompt: string } | { code: string; language: InteractLanguage },
    timeoutMs: number,
  ): Promise<InteractResult> {
    if (s.ending || s.browser.closed)
      throw new ApiError('BROWSER_SESSION_DESTROYED', `Browser session ${s.id} was stopped.`);
    const urls = s.urls;
    if ('prompt' in what) {
      try {
        const done = await this.#o.runPrompt({
          browser: s.browser,
          prompt: what.prompt,
          timeoutMs,
          usage: { teamId: s.caller.teamId, apiKeyId: s.caller.keyId, jobId: s.id },
        });
        const base = { ...urls, output: done.output, stdout: '', result: done.result, stderr: '', killed: false };
        return done.finished
          ? { success: true, ...base, exitCode: 0 }
          : {
              success: false,
              ...base,
              exitCode: 1,
              error: 'The agent reached its step limit before finishing the task.',
            };
      } catch (err) {
        // The timeout ends the prompt as it ends code: killed, and the page stays as the agent left it.
        if (err instanceof InteractPromptTimeoutError)
          return {
            success: false,
            ...urls,
            stdout: '',
            result: '',
            stderr: '',
            exitCode: 1,
            killed: true,
            error: err.message,
          };
        throw this.#failure(s, err);
      }
    }
    let out: SandboxResult;
    try {
      s.runner ??= this.#o.startRunner(s.browser, s.id);
      s.runner.catch(() => (s.runner = undefined));
      out = await (await s.runner).run({ language: what.language, code: what.code, timeoutMs });
    } catch (err) {
      throw this.#failure(s, err);
    }
    // A call that failed because the browser went away (crashed, or closed over CDP) is the
    // machinery's failure, not the code's: its close event follows the code's error closely.
    if (out.error !== undefined && !s.browser.closed)
      await Promise.race([s.browser.whenClosed, new Promise((r) => setTimeout(r, 250))]);
    if (s.browser.closed) throw this.#failure(s, new Error('the browser closed'));
    const success = out.exitCode === 0 && !out.killed && out.error === undefined;
    return {
      success,
      ...urls,
      stdout: out.stdout,
      result: out.result ?? out.stdout,
      stderr: out.stderr,
      exitCode: out.exitCode,
      killed: out.killed,
      ...(out.truncated && { truncated: true }),
      ...(out.error !== undefined && { error: out.error }),
    };
  }

  /** A failure of the machinery (not of the caller's code): the API error to answer with. */
  #failure(s: LiveSession, err: unknown): unknown {
    if (s.browser.closed) {
      void this.#end(s, 'failed', Date.now());
      return new ApiError('INTERACT_EXECUTION_FAILED', `The browser of session ${s.id} stopped unexpectedly.`);
    }
    if (err instanceof ApiError && !(err instanceof ScrapeError)) return err;
    return new ApiError('INTERACT_EXECUTION_FAILED', `The browser session failed: ${(err as Error)?.message ?? err}`);
  }

  async #stop(caller: Caller, row: BrowserSessionRow): Promise<StoppedSession> {
    if (row.teamId !== caller.teamId)
      throw new ForbiddenError('Forbidden: this browser session belongs to another team');
    const s = this.#live.get(row.id);
    if (row.status === 'destroyed' && !s?.ending)
      throw new ApiError('BROWSER_SESSION_DESTROYED', `Browser session ${row.id} was already stopped.`);
    if (!s) {
      if (row.instance !== this.instance)
        throw new ApiError(
          'BROWSER_SESSION_ELSEWHERE',
          `Browser session ${row.id} is held by another API process; send its requests to the process that created it.`,
        );
      const end = { sessionDurationMs: Date.now() - row.createdAt.getTime(), creditsBilled: 0 };
      end.creditsBilled = sessionCredits(end.sessionDurationMs);
      await endBrowserSession(this.#o.db, row.id, {
        reason: 'deleted',
        endedAt: new Date(),
        durationMs: end.sessionDurationMs,
        credits: end.creditsBilled,
      });
      return end;
    }
    return this.#end(s, 'deleted', Date.now());
  }

  /** Ends a live session once: code runner and browser closed, profile saved, billed until `at`. */
  #end(s: LiveSession, reason: SessionEndReason, at: number): Promise<StoppedSession> {
    s.ending ??= (async () => {
      const durationMs = Math.max(0, at - s.startedAt);
      const credits = sessionCredits(durationMs);
      const runner = s.runner;
      s.runner = undefined;
      await runner?.then((r) => r.close()).catch(() => undefined);
      if (s.profile?.save && !s.browser.closed) {
        try {
          const state = await s.browser.context.storageState({ indexedDB: true });
          await saveProfile(this.#o.db, s.caller.teamId, s.profile.name, state);
        } catch (err) {
          this.#o.log.warn({ err, sessionId: s.id }, 'could not save the browser profile of a session');
        }
      }
      await s.browser.close();
      this.#live.delete(s.id);
      try {
        await endBrowserSession(this.#o.db, s.id, { reason, endedAt: new Date(at), durationMs, credits });
      } catch (err) {
        this.#o.log.error({ err, sessionId: s.id }, 'could not record the end of a browser session');
      }
      return { sessionDurationMs: Math.round(durationMs), creditsBilled: credits };
    })();
    return s.ending;
  }

  async #sweep(): Promise<void> {
    const now = Date.now();
    for (const s of this.#live.values()) {
      if (s.ending) continue;
      if (s.endsAt !== undefined && now >= s.endsAt) void this.#end(s, 'ttl', s.endsAt);
      else if (s.busy === 0 && now - s.lastActivity >= s.activityTtlMs)
        void this.#end(s, 'idle', s.lastActivity + s.activityTtlMs);
    }
  }

  async #renew(renewMs: number): Promise<void> {
    const { db } = this.#o;
    try {
      if (this.#live.size) await renewBrowserSessions(db, this.instance);
      // Replays past their window can no longer open a session (409): nothing keeps them.
      await pruneScrapeReplays(db, new Date(Date.now() - this.#o.replayTtlMs));
      // Sessions of a process that stopped renewing for three periods: billed to their last sign of life.
      for (const row of await lostBrowserSessions(db, new Date(Date.now() - 3 * renewMs))) {
        if (row.instance === this.instance && this.#live.has(row.id)) continue;
        const seenAt = (row as BrowserSessionRow & { seenAt: Date }).seenAt.getTime();
        const durationMs = Math.max(0, seenAt - row.createdAt.getTime());
        await endBrowserSession(db, row.id, {
          reason: 'lost',
          endedAt: new Date(seenAt),
          durationMs,
          credits: sessionCredits(durationMs),
        });
      }
    } catch (err) {
      this.#o.log.warn({ err }, 'browser session renewal failed');
    }
  }
}
