// Resource limits of one runner, as a command prefix before bwrap:
// - a cgroup (v1 memory + pids, or v2 memory.max + pids.max) when this process may make one (root,
//   or a delegated v2 subtree): memory of the whole sandbox (runner, python, bash, the agent-browser
//   daemon) and its process count. `sh` joins it before exec'ing the rest, so nothing escapes a race.
// - prlimit: open files, file size, no core dumps. Not RLIMIT_CPU: it counts the long-lived
//   runner's CPU over all its calls; each call's wall-clock timeout bounds CPU instead. Not
//   RLIMIT_AS: V8 reserves far more address space than it uses. Not RLIMIT_NPROC: it counts every
//   process of the uid outside the sandbox's namespace, i.e. the server's own.
// Without a cgroup, memory is bounded by the runner's V8 heap (--max-old-space-size) only, and the
// caller is told so once through `log`.
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LimitOptions {
  memoryMb: number;
  maxProcesses: number;
  maxFileBytes: number;
}

export interface RunnerLimits {
  /** The command prefix: `sh -c 'join cgroup; exec "$@"' sh prlimit … --`, or less. */
  prefix: string[];
  /** The cgroups made (removed by `remove` once the runner is gone). */
  cgroups: string[];
  remove(): Promise<void>;
}

const V1 = '/sys/fs/cgroup';
const writable = (path: string) => {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

function makeCgroups(name: string, opts: LimitOptions): string[] | string {
  const memoryBytes = String(opts.memoryMb * 1024 * 1024);
  try {
    if (writable(join(V1, 'memory', 'cgroup.procs'))) {
      const made: string[] = [];
      const memory = join(V1, 'memory', 'gleaner-sandbox', name);
      mkdirSync(memory, { recursive: true });
      made.push(memory);
      writeFileSync(join(memory, 'memory.limit_in_bytes'), memoryBytes);
      if (existsSync(join(memory, 'memory.memsw.limit_in_bytes'))) {
        writeFileSync(join(memory, 'memory.memsw.limit_in_bytes'), memoryBytes); // no escape into swap
      }
      if (writable(join(V1, 'pids', 'cgroup.procs'))) {
        const pids = join(V1, 'pids', 'gleaner-sandbox', name);
        mkdirSync(pids, { recursive: true });
        made.push(pids);
        writeFileSync(join(pids, 'pids.max'), String(opts.maxProcesses));
      }
      return made;
    }
    const controllers = join(V1, 'cgroup.subtree_control');
    if (existsSync(controllers) && writable(join(V1, 'cgroup.procs'))) {
      const enabled = readFileSync(controllers, 'utf8');
      if (!enabled.includes('memory')) return 'cgroup v2 without the memory controller enabled';
      const group = join(V1, `gleaner-sandbox-${name}`);
      mkdirSync(group);
      writeFileSync(join(group, 'memory.max'), memoryBytes);
      writeFileSync(join(group, 'memory.swap.max'), '0');
      if (enabled.includes('pids')) writeFileSync(join(group, 'pids.max'), String(opts.maxProcesses));
      return [group];
    }
    return 'no writable cgroup hierarchy (not root, or not delegated)';
  } catch (err) {
    return `cgroup setup failed: ${(err as Error).message}`;
  }
}

let noted = false;

export function runnerLimits(name: string, opts: LimitOptions, log: (message: string) => void): RunnerLimits {
  const made = makeCgroups(name, opts);
  const cgroups = typeof made === 'string' ? [] : made;
  if (typeof made === 'string' && !noted) {
    noted = true;
    log(`interact sandbox: ${made}; memory is bounded by the runner's V8 heap only, processes by nothing`);
  }
  const prefix: string[] = [];
  if (cgroups.length) {
    const join = cgroups.map((group) => `echo $$ > ${group}/cgroup.procs`).join(' && ');
    prefix.push('/bin/sh', '-c', `${join} && exec "$@"`, 'sh');
  }
  if (existsSync('/usr/bin/prlimit')) {
    prefix.push('/usr/bin/prlimit', '--nofile=1024:1024', `--fsize=${opts.maxFileBytes}`, '--core=0', '--');
  }
  return {
    prefix,
    cgroups,
    async remove() {
      for (const group of cgroups) {
        // The sandbox's processes die just after bwrap does: EBUSY until the kernel has reaped them.
        for (let attempt = 0; ; attempt++) {
          try {
            rmdirSync(group);
            break;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || attempt >= 40) break;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      }
    },
  };
}
