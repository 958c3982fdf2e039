// Admin command line: `npm run gleaner -- <command>`. Works on the configured database
// (DATA_DIR or DATABASE_URL); with the embedded database, stop the server first.
import { parseArgs } from 'node:util';
import { loadConfig } from './config.ts';
import {
  createApiKey,
  ensureTeam,
  findTeamByName,
  listApiKeys,
  listTeams,
  revokeApiKey,
  setCreditQuota,
} from './store/teams.ts';
import { openStore } from './runtime.ts';
import type { Db } from './store/db-types.ts';

const usage = `Usage: npm run gleaner -- <command>

  keys create --team NAME [--name LABEL]   create an API key (printed once; the team is created if new)
  keys list [--team NAME]                  list keys (id, team, name, preview, state)
  keys revoke KEY_ID_OR_KEY                revoke a key
  teams list                               list teams with their credit quota
  teams quota --team NAME --credits N      set the monthly credit quota (N or "unlimited")
  teams secret --team NAME                 print the team's webhook signing secret
`;

export class UsageError extends Error {}

type Out = (line: string) => void;

export async function runCli(argv: string[], db: Db, out: Out): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { team: { type: 'string' }, name: { type: 'string' }, credits: { type: 'string' } },
  });
  const [group, action, arg] = positionals;
  const command = `${group ?? ''} ${action ?? ''}`.trim();
  switch (command) {
    case 'keys create': {
      if (!values.team) throw new UsageError('keys create needs --team NAME');
      const team = await ensureTeam(db, values.team);
      const created = await createApiKey(db, team.id, { name: values.name });
      out(`Created key ${created.id} for team "${team.name}". Store it now; it is not shown again:`);
      out(created.key);
      return;
    }
    case 'keys list': {
      const keys = await listApiKeys(db, values.team);
      for (const k of keys) {
        const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active';
        out([k.id, k.teamName, k.name, k.preview, state].join('\t'));
      }
      if (keys.length === 0) out('No keys.');
      return;
    }
    case 'keys revoke': {
      if (!arg) throw new UsageError('keys revoke needs a key id or the key itself');
      const revoked = await revokeApiKey(db, arg);
      if (revoked.length === 0) throw new UsageError(`No active key matches ${arg}`);
      for (const k of revoked) out(`Revoked ${k.id} (${k.preview}) of team "${k.teamName}"`);
      return;
    }
    case 'teams list': {
      for (const t of await listTeams(db)) out([t.id, t.name, t.creditQuota ?? 'unlimited'].join('\t'));
      return;
    }
    case 'teams quota': {
      if (!values.team || !values.credits) throw new UsageError('teams quota needs --team NAME --credits N|unlimited');
      const team = await findTeamByName(db, values.team);
      if (!team) throw new UsageError(`No team named ${values.team}`);
      const quota = values.credits === 'unlimited' ? null : Number(values.credits);
      if (quota !== null && !(Number.isInteger(quota) && quota >= 0))
        throw new UsageError('--credits must be a whole number >= 0 or "unlimited"');
      await setCreditQuota(db, team.id, quota);
      out(`Team "${team.name}": monthly credit quota ${quota ?? 'unlimited'}`);
      return;
    }
    case 'teams secret': {
      if (!values.team) throw new UsageError('teams secret needs --team NAME');
      const team = await findTeamByName(db, values.team);
      if (!team) throw new UsageError(`No team named ${values.team}`);
      out(team.webhookSecret);
      return;
    }
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given');
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage);
    return;
  }
  const db = await openStore(loadConfig());
  try {
    await runCli(argv, db, (line) => process.stdout.write(`${line}\n`));
  } finally {
    await db.close();
  }
}

if (import.meta.main) {
  main().catch((err) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`${message}\n${err instanceof UsageError ? `\n${usage}` : ''}`);
    process.exitCode = err instanceof UsageError ? 64 : 1;
  });
}
