// Monitor emails: not configured without SMTP_URL; with it, delivered through a tiny SMTP server on loopback
// (EHLO, MAIL, RCPT, DATA, QUIT: enough for nodemailer) that records what arrived. Also the SMTP settings.
import assert from 'node:assert/strict';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ConfigError, DEFAULT_SMTP_FROM, loadConfig } from '../../src/config.ts';
import { sendCheckEmail } from '../../src/monitor/email.ts';

interface Received {
  from: string;
  to: string[];
  data: string;
}

/** A minimal SMTP server: accepts every recipient except those starting with "reject". */
async function startSmtp() {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = '';
    let inData = false;
    let mail: Received = { from: '', to: [], data: '' };
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 test.local ESMTP ready');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          mail.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          received.push(mail);
          mail = { from: '', to: [], data: '' };
          reply('250 2.0.0 queued');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol === -1) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') reply('250 test.local');
        else if (verb === 'MAIL') {
          mail.from = /<(.*)>/.exec(line)?.[1] ?? '';
          reply('250 2.1.0 ok');
        } else if (verb === 'RCPT') {
          const to = /<(.*)>/.exec(line)?.[1] ?? '';
          if (to.startsWith('reject')) reply('550 5.1.1 no such user');
          else {
            mail.to.push(to);
            reply('250 2.1.5 ok');
          }
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 end with <CRLF>.<CRLF>');
        } else if (verb === 'RSET') {
          mail = { from: '', to: [], data: '' };
          reply('250 ok');
        } else if (verb === 'QUIT') {
          reply('221 bye');
          socket.end();
        } else reply('502 5.5.2 not implemented');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

test('no SMTP_URL: not_configured, nothing attempted', async () => {
  const config = loadConfig({});
  assert.equal(config.smtpUrl, undefined);
  assert.equal(config.smtpFrom, DEFAULT_SMTP_FROM);
  assert.deepEqual(await sendCheckEmail(config, { recipients: ['a@example.com'], subject: 's', text: 't' }), {
    status: 'not_configured',
  });
});

describe('with SMTP_URL', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  before(async () => {
    smtp = await startSmtp();
  });
  after(async () => {
    await smtp.close();
  });

  test('the mail arrives with its sender, recipients, subject and body', async () => {
    const config = loadConfig({ SMTP_URL: smtp.url, SMTP_FROM: 'Monitors <monitors@example.com>' });
    const r = await sendCheckEmail(config, {
      recipients: ['ops@example.com', 'dev@example.com'],
      subject: '[Gleaner] Prices - 2 pages changed',
      text: 'Price: $10 → $12',
      html: '<p>Price: <b>$12</b></p>',
    });
    assert.equal(r.status, 'sent', JSON.stringify(r));
    assert.ok(r.status === 'sent');
    assert.deepEqual(r.accepted, ['ops@example.com', 'dev@example.com']);
    assert.deepEqual(r.rejected, []);
    assert.match(r.messageId, /^<.+@.+>$/);

    assert.equal(smtp.received.length, 1);
    const [mail] = smtp.received;
    assert.equal(mail.from, 'monitors@example.com');
    assert.deepEqual(mail.to, ['ops@example.com', 'dev@example.com']);
    assert.match(mail.data, /^Subject: \[Gleaner\] Prices - 2 pages changed\r?$/m);
    assert.match(mail.data, /^From: Monitors <monitors@example\.com>\r?$/m);
    assert.match(mail.data, /^To: ops@example\.com, dev@example\.com\r?$/m);
    assert.match(mail.data, /^Price: \$10 =E2=86=92 \$12\r?$/m, 'the text part (quoted-printable)');
    assert.match(mail.data, /multipart\/alternative/);
    assert.match(mail.data, /text\/html/);
  });

  test('a recipient the server refuses is reported as rejected; the others get it', async () => {
    const config = loadConfig({ SMTP_URL: smtp.url });
    const r = await sendCheckEmail(config, {
      recipients: ['reject-me@example.com', 'ok@example.com'],
      subject: 'x',
      text: 'y',
    });
    assert.ok(r.status === 'sent', JSON.stringify(r));
    assert.deepEqual(r.accepted, ['ok@example.com']);
    assert.deepEqual(r.rejected, ['reject-me@example.com']);
    assert.equal(smtp.received.at(-1)?.from, 'gleaner@localhost');
  });

  test('no recipients: failed, nothing sent', async () => {
    const before = smtp.received.length;
    const r = await sendCheckEmail(loadConfig({ SMTP_URL: smtp.url }), { recipients: [], subject: 'x', text: 'y' });
    assert.deepEqual(r, { status: 'failed', error: 'no recipients' });
    assert.equal(smtp.received.length, before);
  });
});

test('an unreachable server is a failed result, not a throw', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const r = await sendCheckEmail(loadConfig({ SMTP_URL: `smtp://127.0.0.1:${port}` }), {
    recipients: ['a@example.com'],
    subject: 's',
    text: 't',
  });
  assert.equal(r.status, 'failed');
  assert.ok(r.status === 'failed' && r.error.length > 0);
});

test('SMTP settings: typed, and wrong values are ConfigErrors naming the variable', () => {
  const c = loadConfig({ SMTP_URL: 'smtps://user:pass@mail.example.com:465', SMTP_FROM: 'alerts@example.com' });
  assert.equal(c.smtpUrl, 'smtps://user:pass@mail.example.com:465');
  assert.equal(c.smtpFrom, 'alerts@example.com');
  const cases: [Record<string, string>, string][] = [
    [{ SMTP_URL: 'http://mail.example.com' }, 'SMTP_URL'],
    [{ SMTP_URL: 'not a url' }, 'SMTP_URL'],
    [{ SMTP_URL: 'smtp://mail.example.com', SMTP_FROM: 'nobody' }, 'SMTP_FROM'],
    // A sender without a server would look configured while nothing is sent.
    [{ SMTP_FROM: 'alerts@example.com' }, 'SMTP_FROM'],
  ];
  for (const [env, variable] of cases) {
    assert.throws(
      () => loadConfig(env),
      (err: unknown) =>
        err instanceof ConfigError && err.variables.includes(variable) && err.message.includes(variable),
      JSON.stringify(env),
    );
  }
});
