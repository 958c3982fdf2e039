// Imported for its effect: in this test process localhost and *.localhost resolve to 127.0.0.1
// and every other name fails. *.localhost does not resolve on these machines
// (test/fixtures/README.md), and no test may reach beyond loopback.
import dns from 'node:dns';

(dns.promises as { lookup: unknown }).lookup = async (hostname: string, options?: { all?: boolean }) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  // A loopback address literal resolves to itself, as getaddrinfo answers it.
  if (/^127\.\d+\.\d+\.\d+$/.test(name) || name === '::1') {
    const literal = { address: name, family: name === '::1' ? 6 : 4 };
    return options?.all ? [literal] : literal;
  }
  if (name !== 'localhost' && !name.endsWith('.localhost')) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
  }
  const answer = { address: '127.0.0.1', family: 4 };
  return options?.all ? [answer] : answer;
};
