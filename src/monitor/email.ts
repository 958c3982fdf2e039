// Monitor check emails through SMTP (nodemailer) when SMTP_URL is set; without it nothing is sent and the result
// says `not_configured`, so a check's notificationStatus can report it. Failures are results, never throws: an
// unreachable mail server must not fail the check.
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';

export interface CheckEmail {
  recipients: string[];
  subject: string;
  text: string;
  html?: string;
}

export type EmailResult =
  | { status: 'not_configured' }
  | { status: 'sent'; messageId: string; accepted: string[]; rejected: string[] }
  | { status: 'failed'; error: string };

/** Bounds on one delivery, so a silent mail server cannot hold a check. */
const CONNECTION_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

const addressOf = (a: string | { address: string }) => (typeof a === 'string' ? a : a.address);

/** Sends one email to all recipients; `not_configured` without SMTP_URL. */
export async function sendCheckEmail(
  config: Pick<Config, 'smtpUrl' | 'smtpFrom'>,
  email: CheckEmail,
): Promise<EmailResult> {
  if (!config.smtpUrl) return { status: 'not_configured' };
  if (!email.recipients.length) return { status: 'failed', error: 'no recipients' };
  // Options in the URL's query (e.g. ?tls.rejectUnauthorized=false) win over these.
  const transport = nodemailer.createTransport({
    url: config.smtpUrl,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: CONNECTION_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  });
  try {
    const info = await transport.sendMail({
      from: config.smtpFrom,
      to: email.recipients,
      subject: email.subject,
      text: email.text,
      ...(email.html !== undefined ? { html: email.html } : {}),
    });
    return {
      status: 'sent',
      messageId: info.messageId,
      accepted: info.accepted.map(addressOf),
      rejected: info.rejected.map(addressOf),
    };
  } catch (err) {
    // The SMTP URL may carry a password: the message is nodemailer's, which does not repeat it.
    return { status: 'failed', error: (err as Error).message };
  } finally {
    transport.close();
  }
}
