// The agent job (queue 'agent'; any worker process may run it) and the hourly sweep.
//
//   1. The row is read; an agent no longer processing (cancelled, done by an earlier attempt) is
//      left alone. The job turns active and agent.started is queued (once: its webhookId is stable).
//   2. With an LLM: the plan/act loop (llm-agent.ts). Without one, or when the LLM fails
//      (LLM_TIMEOUT, LLM_RATE_LIMITED, LLM_ERROR…), the deterministic agent (deterministic.ts),
//      reusing the pages already read, with a warning saying which and why.
//   3. The outcome is written once (only a processing agent changes: a cancel that came first
//      wins), then agent.completed or agent.failed is queued with the credits used.
// A retried attempt starts the loop again but keeps the credits already spent against maxCredits.
// Cancelled between steps (DELETE): the run stops and writes nothing (the cancel wrote the outcome).
import type { Mapper } from '../crawl/map.ts';
import { AgentError, ApiError, LlmError } from '../errors.ts';
import type { JobContext } from '../jobs/job-context.ts';
import type { Job } from '../jobs/job-runner.ts';
import { updateJob } from '../store/jobs.ts';
import { AGENT_QUEUE } from './agent.ts';
import { runDeterministicAgent } from './deterministic.ts';
import { sendAgentEvent } from './events.ts';
import { runLlmAgent } from './llm-agent.ts';
import { type AgentOutcome, deleteExpiredAgents, finishAgent, loadAgent } from './rows.ts';
import { AgentCancelled, AgentRun, type AgentToolDeps } from './tools.ts';
import type { Searcher } from '../search/search.ts';

const SWEEP_QUEUE = 'sweep-agents';
/** Retries of an agent job (a database failure, a shutdown) before it is recorded as failed. */
const RETRIES = 2;
/** How long one attempt may run (steps, scrapes, LLM turns) before its signal aborts it. */
const ATTEMPT_SECONDS = 1800;

export class AgentJob {
  readonly #d: AgentToolDeps;

  constructor(deps: AgentToolDeps) {
    this.#d = deps;
  }

  /** The queue's handler (the file comment). */
  async run(job: Job<{ agentId: string }>): Promise<void> {
    const { db } = this.#d;
    const row = await loadAgent(db, job.data.agentId);
    if (!row || row.status !== 'processing') return;
    await updateJob(db, row.id, { status: 'active' });
    await sendAgentEvent(this.#d, row, { event: 'started' });
    const run = new AgentRun(this.#d, row, job.signal);
    let outcome: AgentOutcome;
    try {
      outcome = await this.#answer(run);
    } catch (err) {
      if (err instanceof AgentCancelled) return;
      if (err instanceof AgentError) outcome = failed(err.code, err.message);
      else if (job.retryCount < RETRIES) throw err;
      // Last attempt: record the failure so the agent ends (a cancelled one stays cancelled).
      else
        outcome = failed(
          'AGENT_FAILED',
          job.signal.aborted
            ? `the agent was stopped after ${ATTEMPT_SECONDS / 60} minutes, or its process stopped, ${RETRIES + 1} times`
            : `the agent failed: ${describe(err)}`,
        );
    }
    const credits = await finishAgent(db, row.id, outcome);
    if (credits === null) return; // cancelled meanwhile
    await sendAgentEvent(
      this.#d,
      row,
      outcome.status === 'completed'
        ? { event: 'completed', creditsUsed: credits, data: outcome.data }
        : { event: 'failed', creditsUsed: credits, error: outcome.error ?? 'the agent failed' },
    );
  }

  async #answer(run: AgentRun): Promise<AgentOutcome> {
    const llm = this.#d.llm?.available ? this.#d.llm : undefined;
    if (!llm) return runDeterministicAgent(run, 'no LLM is configured');
    try {
      return await runLlmAgent(run, llm, this.#d.llmMaxOutputTokens);
    } catch (err) {
      if (run.signal.aborted || !(err instanceof LlmError)) throw err;
      this.#d.log.warn(
        { agentId: run.row.id, code: err.code },
        'agent: the LLM failed; the deterministic agent answers',
      );
      return {
        ...(await runDeterministicAgent(run, `the LLM failed (${err.code}: ${err.message})`)),
        model: llm.model,
      };
    }
  }
}

function failed(code: string, message: string): AgentOutcome {
  return { status: 'failed', code, error: `${code}: ${message}` };
}

function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message || err.name : String(err);
}

/** The agent queue's handler and its hourly sweep, with the process's shared engines. */
export async function registerAgentJobs(ctx: JobContext, tools: { mapper: Mapper; searcher: Searcher }): Promise<void> {
  const { queue, db, config, log, stack } = ctx;
  await queue.createQueue(AGENT_QUEUE, { retryLimit: RETRIES, retryDelay: 2, expireInSeconds: ATTEMPT_SECONDS });
  await queue.createQueue(SWEEP_QUEUE, { retryLimit: 1 });
  await queue.schedule(SWEEP_QUEUE, '49 * * * *');
  const agentJob = new AgentJob({
    db,
    queue,
    log,
    scraper: stack.scraper,
    searcher: tools.searcher,
    mapper: tools.mapper,
    llm: stack.llm,
    llmMaxOutputTokens: config.llm.maxOutputTokens,
  });
  await queue.work<{ agentId: string }>(AGENT_QUEUE, (job) => agentJob.run(job));
  await queue.work(SWEEP_QUEUE, async () => {
    const n = await deleteExpiredAgents(db);
    if (n) log.info({ agents: n }, 'deleted expired agents');
  });
}
