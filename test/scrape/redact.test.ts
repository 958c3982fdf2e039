// redactPII: detection per entity and mode, negatives (Luhn, dates, versions, prices, ISBNs, invalid
// IPs), replacement styles, entity filtering, Markdown structure and counts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ibanValid, luhnValid } from '../../src/scrape/transform/redact-checksums.ts';
import { ipv6Valid } from '../../src/scrape/transform/redact-location.ts';
import { redactPII, type RedactOptions } from '../../src/scrape/transform/redact.ts';

type Mode = NonNullable<RedactOptions['mode']>;

interface Case {
  name: string;
  input: string;
  /** Expected text with the default 'tag' style; equal to input for a negative case. */
  want: string;
  /** Modes to check (default: the default mode, 'accurate'). */
  modes?: Mode[];
}

const unchanged = (name: string, input: string, modes?: Mode[]): Case => ({ name, input, want: input, modes });

const ALL: Mode[] = ['fast', 'accurate', 'aggressive'];
const ACC: Mode[] = ['accurate', 'aggressive'];

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';

const CASES: Case[] = [
  // EMAIL
  { name: 'email: plain', input: 'Write to jane@example.com today.', want: 'Write to <EMAIL> today.', modes: ALL },
  {
    name: 'email: plus addressing, subdomain',
    input: 'jane.doe+news@mail.example.co.uk.',
    want: '<EMAIL>.',
    modes: ALL,
  },
  {
    name: 'email: in a table cell',
    input: '| Jane | jane_d@corp.example.org |',
    want: '| Jane | <EMAIL> |',
    modes: ALL,
  },
  {
    name: 'email: obfuscated [at] [dot] (aggressive)',
    input: 'Mail jane [at] example [dot] com please',
    want: 'Mail <EMAIL> please',
    modes: ['aggressive'],
  },
  {
    name: 'email: obfuscated (at)(dot) (aggressive)',
    input: 'john(at)mail(dot)org',
    want: '<EMAIL>',
    modes: ['aggressive'],
  },
  {
    name: 'email: spelled out at/dot (aggressive)',
    input: 'bob at example dot com',
    want: '<EMAIL>',
    modes: ['aggressive'],
  },
  unchanged('email: obfuscated ignored outside aggressive', 'Mail jane [at] example [dot] com please', [
    'fast',
    'accurate',
  ]),
  unchanged('email: "met at example.com" is prose', 'We met at example.com last year.', ALL),
  unchanged('email: bare @handle', 'Follow @example on social media.', ALL),

  // PHONE
  { name: 'phone: US (555) 123-4567', input: 'Call (555) 123-4567.', want: 'Call <PHONE>.', modes: ACC },
  { name: 'phone: US 555-123-4567', input: 'Call 555-123-4567 now', want: 'Call <PHONE> now', modes: ACC },
  { name: 'phone: US 555.123.4567', input: 'Phone 555.123.4567', want: 'Phone <PHONE>', modes: ACC },
  { name: 'phone: US +1 (555) 123-4567', input: 'Tel: +1 (555) 123-4567', want: 'Tel: <PHONE>', modes: ACC },
  { name: 'phone: UK 020 7946 0958', input: 'London office 020 7946 0958', want: 'London office <PHONE>', modes: ACC },
  { name: 'phone: UK +44 (0)20 7946 0958', input: 'Ring +44 (0)20 7946 0958.', want: 'Ring <PHONE>.', modes: ACC },
  { name: 'phone: UK mobile 07700 900123', input: 'Mobile 07700 900123', want: 'Mobile <PHONE>', modes: ACC },
  { name: 'phone: DE +49 30 1234567', input: 'Berlin: +49 30 1234567', want: 'Berlin: <PHONE>', modes: ACC },
  { name: 'phone: DE 030/1234567', input: 'Büro 030/1234567', want: 'Büro <PHONE>', modes: ACC },
  { name: 'phone: FR 01 23 45 67 89', input: 'Paris 01 23 45 67 89', want: 'Paris <PHONE>', modes: ACC },
  { name: 'phone: 00 prefix', input: 'Dial 0049 30 1234567', want: 'Dial <PHONE>', modes: ACC },
  {
    name: 'phone: contiguous after cue (aggressive)',
    input: 'Tel: 5551234567',
    want: 'Tel: <PHONE>',
    modes: ['aggressive'],
  },
  unchanged('phone: contiguous without cue is a plain number', 'Tel: 5551234567', ['fast', 'accurate']),
  {
    name: 'phone: loose 4-4 grouping (aggressive)',
    input: 'Hotline 6123 4567',
    want: 'Hotline <PHONE>',
    modes: ['aggressive'],
  },
  unchanged('phone: loose grouping not in accurate', 'Hotline 6123 4567', ['accurate']),
  unchanged('phone: not in fast mode', 'Call 555-123-4567 now', ['fast']),
  unchanged('phone: ISO date', 'Published 2026-11-22 at 10:30.', ALL),
  unchanged('phone: European date', 'Am 22.11.2026 um 10:30:15 Uhr', ALL),
  unchanged('phone: date with time', 'Updated 2026-11-22 14:05', ALL),
  unchanged('phone: version numbers', 'Upgrade from 1.2.3 to 10.0.19041.1 today', ALL),
  unchanged('phone: ISBN-13', 'ISBN 978-3-16-148410-0', ALL),
  unchanged('phone: ISBN-13 without label', 'See 978-0-306-40615-7 for details', ALL),
  unchanged('phone: year and year range', 'In 2026, and from 1999-2005 or 1999 - 2005', ALL),
  unchanged('phone: prices', 'It costs $1,234,567.89 or 1 234 567 € or 12 345 678 USD', ALL),
  unchanged('phone: order number in prose', 'Order 123456789 shipped; order #555-123-4567 too', ALL),
  unchanged('phone: plain large number', 'The population was 38005238 in 2021.', ALL),
  unchanged('phone: decimals and times', 'Pi is 3.14159265 and the race took 12:30:45.', ALL),
  unchanged('phone: 15-digit grouped not phone-shaped', 'Ref 1234 5678 9012 345', ['accurate']),

  // FINANCIAL
  {
    name: 'card: Visa with spaces',
    input: 'Card 4111 1111 1111 1111 expires',
    want: 'Card <FINANCIAL> expires',
    modes: ALL,
  },
  { name: 'card: dashes', input: 'Card 5555-5555-5555-4444.', want: 'Card <FINANCIAL>.', modes: ALL },
  { name: 'card: contiguous Amex', input: 'Amex 378282246310005', want: 'Amex <FINANCIAL>', modes: ALL },
  { name: 'card: Amex 4-6-5', input: 'Amex 3782 822463 10005', want: 'Amex <FINANCIAL>', modes: ALL },
  unchanged('card: 16 digits failing Luhn', 'Card 4111 1111 1111 1112 expires', ALL),
  unchanged('card: contiguous failing Luhn', 'Tracking 4111111111111112', ALL),
  unchanged('card: Luhn-valid but no card prefix', 'Serial 0000 0000 0000 0000', ALL),
  { name: 'IBAN: DE spaced', input: 'IBAN DE89 3704 0044 0532 0130 00.', want: 'IBAN <FINANCIAL>.', modes: ALL },
  { name: 'IBAN: GB compact', input: 'Pay GB82WEST12345698765432 now', want: 'Pay <FINANCIAL> now', modes: ALL },
  unchanged('IBAN: failing mod-97', 'Pay GB82WEST12345698765433 now', ALL),
  { name: 'SSN: dashed', input: 'SSN 123-45-6789.', want: 'SSN <FINANCIAL>.', modes: ALL },
  unchanged(
    'SSN: 000/666/9xx area, 00 group, 0000 serial',
    '000-12-3456 666-12-3456 912-34-5678 123-00-4567 123-45-0000',
    ALL,
  ),
  {
    name: 'SSN: undashed after cue (aggressive)',
    input: 'SSN: 123456789',
    want: 'SSN: <FINANCIAL>',
    modes: ['aggressive'],
  },
  { name: 'UK NI number', input: 'NI number AB 12 34 56 C.', want: 'NI number <FINANCIAL>.', modes: ACC },
  unchanged('UK NI: invalid prefix', 'Code GB 12 34 56 A and QQ123456C.', ACC),

  // LOCATION
  { name: 'IPv4', input: 'Server 192.168.1.10 responded', want: 'Server <LOCATION> responded', modes: ALL },
  { name: 'IPv4 at sentence end', input: 'It was 8.8.8.8.', want: 'It was <LOCATION>.', modes: ALL },
  unchanged('IPv4: invalid octet', 'Bad 999.1.1.1 and 256.256.256.256', ALL),
  unchanged('IPv4: versions', 'Release 1.2.3.4.5, version 4.2.1.0 and 10.0', ALL),
  unchanged('IPv4: unspecified, loopback, broadcast', 'Bind 0.0.0.0 or 127.0.0.1; 255.255.255.255', ALL),
  { name: 'IPv6 compressed', input: 'Host 2001:db8::8a2e:370:7334 is up', want: 'Host <LOCATION> is up', modes: ALL },
  { name: 'IPv6 full', input: 'Addr 2001:0db8:85a3:0000:0000:8a2e:0370:7334', want: 'Addr <LOCATION>', modes: ALL },
  unchanged('IPv6: times, MACs and C++ scopes', 'At 10:30:00, MAC 00:1A:2B:3C:4D:5E, std::vector and Face::Add', ALL),
  {
    name: 'street: US with city/state/ZIP',
    input: 'Visit 123 Main Street, Springfield, IL 62704 today',
    want: 'Visit <LOCATION> today',
    modes: ACC,
  },
  {
    name: 'street: abbreviated suffix and unit',
    input: 'Ship to 42 W Elm Ave, Apt 5B please',
    want: 'Ship to <LOCATION> please',
    modes: ACC,
  },
  {
    name: 'street: UK',
    input: 'Lives at 221B Baker Street, London NW1 6XE.',
    want: 'Lives at <LOCATION>.',
    modes: ACC,
  },
  {
    name: 'street: German -straße',
    input: 'Adresse: Hauptstraße 5, 10115 Berlin',
    want: 'Adresse: <LOCATION>',
    modes: ACC,
  },
  {
    name: 'street: German two words',
    input: 'Wir sind in der Berliner Straße 12a.',
    want: 'Wir sind in der <LOCATION>.',
    modes: ACC,
  },
  { name: 'street: French', input: 'Au 12 rue de la Paix, 75002 Paris.', want: 'Au <LOCATION>.', modes: ACC },
  unchanged('street: not in fast mode', 'Visit 123 Main Street today', ['fast']),
  unchanged('street: numbers with capitalised words but no suffix', 'We sold 12 Blue Widgets in 3 Big Boxes.', ACC),
  unchanged('street: a Title Case headline', 'Top 10 Main Street Eateries', ACC),
  {
    name: 'ZIP/state alone (aggressive)',
    input: 'Based in Springfield, IL 62704.',
    want: 'Based in <LOCATION>.',
    modes: ['aggressive'],
  },
  unchanged('ZIP/state alone not in accurate', 'Based in Springfield, IL 62704.', ['accurate']),

  // SECRET
  { name: 'AWS access key', input: 'key AKIAIOSFODNN7EXAMPLE here', want: 'key <SECRET> here', modes: ALL },
  { name: 'GitHub token', input: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789', want: '<SECRET>', modes: ALL },
  {
    name: 'GitHub fine-grained PAT',
    input: 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
    want: '<SECRET>',
    modes: ALL,
  },
  {
    name: 'Slack token',
    input: 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
    want: '<SECRET>',
    modes: ALL,
  },
  {
    name: 'Stripe keys',
    input: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc and rk_live_abcdef1234567890',
    want: '<SECRET> and <SECRET>',
    modes: ALL,
  },
  {
    name: 'OpenAI-style sk- key',
    input: 'Use sk-proj-abc123def456ghi789jkl012 here',
    want: 'Use <SECRET> here',
    modes: ALL,
  },
  unchanged('sk- words are not keys', 'The sk-learn and sk-short-key-without-digits-here names', ALL),
  { name: 'Google API key', input: 'AIzaSyA1234567890abcdefghijklmnopqrstuv', want: '<SECRET>', modes: ALL },
  { name: 'JWT', input: `token ${JWT} end`, want: 'token <SECRET> end', modes: ALL },
  { name: 'password assignment (value only)', input: 'password: hunter2', want: 'password: <SECRET>', modes: ALL },
  { name: 'api_key= assignment', input: 'api_key=abc123XYZ&x', want: 'api_key=<SECRET>&x', modes: ALL },
  {
    name: 'env var assignment',
    input: 'export DB_PASSWORD="s3cr3t pass"',
    want: 'export DB_PASSWORD="<SECRET>"',
    modes: ALL,
  },
  { name: 'JSON secret', input: '{"client_secret": "abcDEF123"}', want: '{"client_secret": "<SECRET>"}', modes: ALL },
  unchanged('password prose', 'Password: must be at least eight characters long.', ALL),
  unchanged('password placeholder', 'API_KEY=${API_KEY} and password=<your-password>', ALL),
  {
    name: 'Authorization: Bearer',
    input: 'Authorization: Bearer abc.def.ghi123456',
    want: 'Authorization: Bearer <SECRET>',
    modes: ALL,
  },
  {
    name: 'PEM private key body',
    input: '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcdEFGH==\n-----END RSA PRIVATE KEY-----',
    want: '-----BEGIN RSA PRIVATE KEY-----\n<SECRET>\n-----END RSA PRIVATE KEY-----',
    modes: ALL,
  },

  // PERSON
  { name: 'person: Dr. First Last', input: 'Dr. John Smith said so.', want: 'Dr. <PERSON> said so.', modes: ACC },
  { name: 'person: middle initial', input: 'Ask Mrs. Jane A. Doe.', want: 'Ask Mrs. <PERSON>.', modes: ACC },
  { name: 'person: possessive kept', input: "Prof. Müller's team", want: "Prof. <PERSON>'s team", modes: ACC },
  { name: 'person: no dot honorific', input: 'Mr Smith arrived', want: 'Mr <PERSON> arrived', modes: ACC },
  unchanged('person: honorific names not in fast', 'Dr. John Smith said so.', ['fast']),
  unchanged('person: bare names are not detected', 'John Smith said so.', ALL),
  {
    name: 'person: "my name is" (aggressive)',
    input: 'Hi, my name is Alice Cooper.',
    want: 'Hi, my name is <PERSON>.',
    modes: ['aggressive'],
  },
  {
    name: 'person: "Name:" in bold (aggressive)',
    input: '**Name:** Bob Stone',
    want: '**Name:** <PERSON>',
    modes: ['aggressive'],
  },
  {
    name: 'person: contact First Last (aggressive)',
    input: 'Please contact Jane Doe.',
    want: 'Please contact <PERSON>.',
    modes: ['aggressive'],
  },
  unchanged('person: "Contact Us Today" is not a name', 'Contact Us Today for a quote.', ['aggressive']),
  unchanged('person: cue names not in accurate', 'Hi, my name is Alice Cooper.', ['accurate']),
];

describe('redactPII: detection table', () => {
  for (const c of CASES) {
    for (const mode of c.modes ?? ['accurate']) {
      test(`${c.name} [${mode}]`, () => {
        assert.equal(redactPII(c.input, { mode }).text, c.want);
      });
    }
  }
  test('the table has at least 60 cases', () => {
    assert.ok(CASES.length >= 60, String(CASES.length));
  });
});

describe('redactPII: options', () => {
  test('defaults (and `true`): accurate mode, every entity, tag style', () => {
    const input = 'Dr. Ann Lee, ann@example.com, (555) 123-4567, 10.0.0.1';
    const want = 'Dr. <PERSON>, <EMAIL>, <PHONE>, <LOCATION>';
    assert.equal(redactPII(input).text, want);
    assert.equal(redactPII(input, true).text, want);
    assert.equal(redactPII(input, {}).text, want);
  });

  test('mask keeps the length of every match', () => {
    const input = 'Mail jane@example.com or call 555-123-4567; card 4111 1111 1111 1111.';
    const r = redactPII(input, { replaceStyle: 'mask' });
    assert.equal(r.text, 'Mail **************** or call ************; card *******************.');
    assert.equal(r.text.length, input.length);
  });

  test('mask keeps newlines inside a multi-line match', () => {
    const input = '-----BEGIN PRIVATE KEY-----\nAAAA\nBBBB\n-----END PRIVATE KEY-----';
    const r = redactPII(input, { replaceStyle: 'mask' });
    assert.equal(r.text, '-----BEGIN PRIVATE KEY-----\n****\n****\n-----END PRIVATE KEY-----');
  });

  test('remove deletes the match and collapses the double space', () => {
    assert.equal(
      redactPII('Call 555-123-4567 now or mail a@b.io.', { replaceStyle: 'remove' }).text,
      'Call now or mail .',
    );
    assert.equal(redactPII('| Jane | jane@example.com |', { replaceStyle: 'remove' }).text, '| Jane | |');
  });

  test('entity filter: only EMAIL leaves phones and the rest alone', () => {
    const input = 'jane@example.com, 555-123-4567, 4111 1111 1111 1111, Dr. Ann Lee';
    const r = redactPII(input, { entities: ['EMAIL'] });
    assert.equal(r.text, '<EMAIL>, 555-123-4567, 4111 1111 1111 1111, Dr. Ann Lee');
    assert.deepEqual(r.counts, { EMAIL: 1 });
  });

  test('entity filter: PHONE and FINANCIAL only', () => {
    const r = redactPII('jane@example.com, 555-123-4567, 4111 1111 1111 1111', { entities: ['PHONE', 'FINANCIAL'] });
    assert.equal(r.text, 'jane@example.com, <PHONE>, <FINANCIAL>');
  });

  test('an empty entity list or empty input changes nothing', () => {
    assert.deepEqual(redactPII('jane@example.com', { entities: [] }), { text: 'jane@example.com', counts: {} });
    assert.deepEqual(redactPII(''), { text: '', counts: {} });
  });

  test('counts per entity', () => {
    const input = [
      'Dr. Ann Lee (ann@example.com, bob@example.org) called +1 555 123 4567 from 10.0.0.1.',
      'Card 4111 1111 1111 1111, SSN 123-45-6789, token ghp_abcdefghijklmnopqrstuvwxyz0123456789.',
      'Office: 123 Main Street.',
    ].join('\n');
    const r = redactPII(input);
    assert.deepEqual(r.counts, { PERSON: 1, EMAIL: 2, PHONE: 1, LOCATION: 2, FINANCIAL: 2, SECRET: 1 });
  });

  test('modes are cumulative', () => {
    const input = 'Dr. Ann Lee, jane [at] example [dot] com, 555-123-4567, jane@example.com';
    assert.equal(
      redactPII(input, { mode: 'fast' }).text,
      'Dr. Ann Lee, jane [at] example [dot] com, 555-123-4567, <EMAIL>',
    );
    assert.equal(
      redactPII(input, { mode: 'accurate' }).text,
      'Dr. <PERSON>, jane [at] example [dot] com, <PHONE>, <EMAIL>',
    );
    assert.equal(redactPII(input, { mode: 'aggressive' }).text, 'Dr. <PERSON>, <EMAIL>, <PHONE>, <EMAIL>');
  });

  test('deterministic', () => {
    const input = 'Dr. Ann Lee, ann@example.com, 555-123-4567 at 123 Main Street';
    assert.deepEqual(redactPII(input), redactPII(input));
  });
});

describe('redactPII: Markdown structure', () => {
  test('link URLs are kept; the link text is redacted', () => {
    const input =
      'See [Dr. Ann Lee at 555-123-4567](https://example.com/people/555-123-4567?id=10.0.0.1 "Dr. Ann Lee").';
    assert.equal(
      redactPII(input).text,
      'See [Dr. <PERSON> at <PHONE>](https://example.com/people/555-123-4567?id=10.0.0.1 "Dr. <PERSON>").',
    );
  });

  test('mailto: links have the address redacted in the URL too', () => {
    assert.equal(
      redactPII('[jane@example.com](mailto:jane@example.com?subject=Hi)').text,
      '[<EMAIL>](mailto:<EMAIL>?subject=Hi)',
    );
  });

  test('tel: links have the number redacted (from accurate mode, like other phones)', () => {
    const input = '[Call us](tel:+1-555-123-4567) or <tel:+4930123456>';
    assert.equal(redactPII(input).text, '[Call us](tel:<PHONE>) or <tel:PHONE>');
    assert.equal(redactPII(input, { mode: 'fast' }).text, input);
  });

  test('secrets in a query string: only the value', () => {
    const input = '[API](https://api.example.com/v1/items?api_key=abcd1234efgh&page=2&sig=ZmFrZXNpZw)';
    assert.equal(redactPII(input).text, '[API](https://api.example.com/v1/items?api_key=<SECRET>&page=2&sig=<SECRET>)');
  });

  test('known token formats in other query parameters are redacted', () => {
    const input = `![chart](https://img.example.com/c.png?x=${JWT}&w=100)`;
    assert.equal(redactPII(input).text, '![chart](https://img.example.com/c.png?x=<SECRET>&w=100)');
  });

  test('images keep their URL; alt text is text', () => {
    const input = '![Portrait of Dr. Ann Lee](https://cdn.example.com/photos/8.8.8.8/ann@2x.png)';
    assert.equal(
      redactPII(input).text,
      '![Portrait of Dr. <PERSON>](https://cdn.example.com/photos/8.8.8.8/ann@2x.png)',
    );
  });

  test('bare URLs are kept, except credentials and secret parameters', () => {
    const input = 'Fetch https://user:hunter2pass@example.com/p/555-123-4567?token=abc123secret&q=1 now.';
    assert.equal(
      redactPII(input).text,
      'Fetch https://user:<SECRET>@example.com/p/555-123-4567?token=<SECRET>&q=1 now.',
    );
  });

  test('autolinks keep their angle brackets', () => {
    assert.equal(
      redactPII('Mail <jane@example.com> or <mailto:bob@example.org>.').text,
      'Mail <EMAIL> or <mailto:EMAIL>.',
    );
  });

  test('reference definitions keep their URL', () => {
    const input = 'See [docs][1].\n\n[1]: https://example.com/u/555-123-4567 "Call 555-123-4567"';
    assert.equal(redactPII(input).text, 'See [docs][1].\n\n[1]: https://example.com/u/555-123-4567 "Call <PHONE>"');
  });

  test('tables keep their pipes and alignment row', () => {
    const input = '| Name | Phone | Email |\n|:--|:-:|--:|\n| Dr. Ann Lee | (555) 123-4567 | ann@example.com |';
    assert.equal(
      redactPII(input).text,
      '| Name | Phone | Email |\n|:--|:-:|--:|\n| Dr. <PERSON> | <PHONE> | <EMAIL> |',
    );
  });

  test('code fences and inline code are redacted too', () => {
    const input = [
      '```bash',
      'export OPENAI_API_KEY=sk-abc123def456ghi789jkl012mno',
      `curl -H "Authorization: Bearer ${JWT}" https://api.example.com`,
      '```',
      'Run `AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY aws s3 ls`.',
    ].join('\n');
    assert.equal(
      redactPII(input).text,
      [
        '```bash',
        'export OPENAI_API_KEY=<SECRET>',
        'curl -H "Authorization: Bearer <SECRET>" https://api.example.com',
        '```',
        'Run `AWS_SECRET_ACCESS_KEY=<SECRET> aws s3 ls`.',
      ].join('\n'),
    );
  });

  test('emphasis and headings stay intact', () => {
    const input = '## Contact\n\n**Email:** _jane@example.com_\n\n> Call 555-123-4567';
    assert.equal(redactPII(input).text, '## Contact\n\n**Email:** _<EMAIL>_\n\n> Call <PHONE>');
  });
});

describe('redactPII: validators', () => {
  test('Luhn', () => {
    assert.equal(luhnValid('4111111111111111'), true);
    assert.equal(luhnValid('4111111111111112'), false);
    assert.equal(luhnValid('79927398713'), true);
  });
  test('IBAN mod-97', () => {
    assert.equal(ibanValid('DE89 3704 0044 0532 0130 00'), true);
    assert.equal(ibanValid('DE89 3704 0044 0532 0130 01'), false);
    assert.equal(ibanValid('FR1420041010050500013M02606'), true);
  });
  test('IPv6 shape', () => {
    assert.equal(ipv6Valid('::ffff:192.0.2.1'), true);
    assert.equal(ipv6Valid('fe80::1'), true);
    assert.equal(ipv6Valid('1:2:3'), false);
    assert.equal(ipv6Valid('1::2::3'), false);
  });
});
