import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';

test('defaults give a laptop setup: port 3002, ./data, private network blocked', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3002);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.dataDir, './data');
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.allowPrivateNetwork, false);
  assert.equal(c.logLevel, 'info');
  assert.equal(c.rateLimits.scrape, 600);
  assert.deepEqual(c.webhookRetryDelays, [60, 300, 900]);
  assert.deepEqual(c.media, {
    maxBytes: 104857600,
    zdrMaxBytes: 10485760,
    ffmpegPath: 'ffmpeg',
    ffprobePath: 'ffprobe',
    maxProcesses: 2,
  });
});

test('values are parsed and typed; empty strings count as unset', () => {
  const c = loadConfig({
    PORT: '8080',
    DATABASE_URL: 'postgres://u@127.0.0.1:5432/db',
    GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
    GLEANER_RATE_LIMITS: 'scrape=5, crawl=0',
    LOG_LEVEL: '',
    GLEANER_WEBHOOK_RETRY_DELAYS: '1, 2.5',
    FFMPEG_MAX_PROCESSES: '6',
  });
  assert.equal(c.media.maxProcesses, 6);
  assert.deepEqual(c.webhookRetryDelays, [1, 2.5]);
  assert.equal(c.port, 8080);
  assert.equal(c.databaseUrl, 'postgres://u@127.0.0.1:5432/db');
  assert.equal(c.allowPrivateNetwork, true);
  assert.equal(c.rateLimits.scrape, 5);
  assert.equal(c.rateLimits.crawl, 0);
  assert.equal(c.rateLimits.map, 300, 'unnamed classes keep their default');
  assert.equal(c.logLevel, 'info');
});

test('a wrong value is a ConfigError naming each variable', () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: 'x' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x/y' }, 'DATABASE_URL'],
    [{ GLEANER_ALLOW_PRIVATE_NETWORK: 'perhaps' }, 'GLEANER_ALLOW_PRIVATE_NETWORK'],
    [{ GLEANER_API_KEY: 'short' }, 'GLEANER_API_KEY'],
    [{ GLEANER_RATE_LIMITS: 'teleport=3' }, 'GLEANER_RATE_LIMITS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ GLEANER_WEBHOOK_RETRY_DELAYS: '60,soon' }, 'GLEANER_WEBHOOK_RETRY_DELAYS'],
    [{ DATABASE_SCHEMA: 'Robert"; drop' }, 'DATABASE_SCHEMA'],
    [{ FFMPEG_MAX_PROCESSES: '0' }, 'FFMPEG_MAX_PROCESSES'],
  ];
  for (const [env, name] of cases) {
    assert.throws(
      () => loadConfig(env),
      (err: unknown) => err instanceof ConfigError && err.variables.includes(name) && err.message.includes(`${name}=`),
      name,
    );
  }
});
