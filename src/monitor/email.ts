// Stand-in until h-mon-pure merges (engineer B's module replaces this file): a check's email,
// through nodemailer when SMTP_URL is set; otherwise reported as not configured.
import nodemailer from 'nodemailer';
import type { Config } from '../config.ts';

export async function sendCheckEmail(
  config: Config,
  mail: { recipients: string[]; subject: string; text: string; html?: string },
): Promise<{ status: 'sent' | 'failed' | 'not_configured'; error?: string }> {
  const { smtpUrl, smtpFrom } = config as Config & { smtpUrl?: string; smtpFrom?: string };
  if (!smtpUrl) return { status: 'not_configured' };
  try {
    const transport = nodemailer.createTransport(smtpUrl);
    await transport.sendMail({ from: smtpFrom ?? 'gleaner@localhost', to: mail.recipients, ...mail });
    return { status: 'sent' };
  } catch (err) {
    return { status: 'failed', error: (err as Error).message };
  }
}
