import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeText, repairMojibake } from '../../src/documents/charset.ts';

const latin1Of = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

describe('decodeText', () => {
  test('UTF-8 bytes under a Latin-1 or windows-1252 label are UTF-8', () => {
    const bytes = Buffer.from('<p>Zoë’s café ✓</p>', 'utf8');
    for (const label of ['ISO-8859-1', 'windows-1252', 'latin1']) {
      const out = decodeText(bytes, `text/html; charset=${label}`, true);
      assert.deepEqual(out, { text: '<p>Zoë’s café ✓</p>', encoding: 'utf-8' }, label);
    }
  });

  test('real Latin-1 stays Latin-1 (its bytes are not UTF-8)', () => {
    const bytes = Buffer.from('<p>café naïve</p>', 'latin1');
    assert.deepEqual(decodeText(bytes, 'text/html; charset=ISO-8859-1', true), {
      text: '<p>café naïve</p>',
      encoding: 'windows-1252',
    });
  });

  test('a file keeps its declared charset (the override is for web responses)', () => {
    const bytes = Buffer.from('é', 'utf8');
    assert.equal(decodeText(bytes, 'text/plain; charset=ISO-8859-1', false, 'file').text, 'Ã©');
  });

  test('double-encoded UTF-8 in a web page is repaired, whether the page declares UTF-8 or nothing', () => {
    const page = `<p>${latin1Of('Logitech’s mouse — 10 € 😀')}</p>`;
    assert.equal(decodeText(Buffer.from(page, 'utf8'), 'text/html', true).text, '<p>Logitech’s mouse — 10 € 😀</p>');
    assert.equal(
      decodeText(Buffer.from(page, 'utf8'), 'text/html; charset=utf-8', true).text,
      '<p>Logitech’s mouse — 10 € 😀</p>',
    );
  });
});

describe('repairMojibake', () => {
  test('repairs runs that hold a C1 control, and only those', () => {
    assert.equal(repairMojibake(latin1Of('don’t')), 'don’t');
    // "Ã¤" has no C1 control: it may be quoted on purpose; so may a lone "â".
    assert.equal(repairMojibake('"Ã¤" for ä, and â'), '"Ã¤" for ä, and â');
    // A C1 control not part of a valid sequence stays.
    assert.equal(repairMojibake('a\u0085b'), 'a\u0085b');
    assert.equal(repairMojibake('plain text'), 'plain text');
  });
});
