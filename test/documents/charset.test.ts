import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeText, detectCharset, repairMojibake } from '../../src/documents/charset.ts';
import { detectDocument } from '../../src/documents/detect.ts';
import { encodeLegacy } from '../helpers/legacy-encoding.ts';

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

describe('charset detection (undeclared bytes that are not UTF-8)', () => {
  // Real text of a line or two, as a CSV or a note would hold.
  const samples: [string, string][] = [
    ['shift_jis', '名前,年齢,都市\n山田太郎,30,東京\nすずき はなこ,25,大阪\n佐藤次郎,41,名古屋\n'],
    ['euc-jp', '吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。'],
    ['gb18030', '中华人民共和国是工人阶级领导的、以工农联盟为基础的人民民主专政的社会主义国家。'],
    ['big5', '中華民國的主權屬於國民全體。中華民國人民無分男女，宗教，種族，階級，黨派，在法律上一律平等。'],
    ['euc-kr', '이름,나이,도시\n김철수,30,서울\n이영희,25,부산\n박민수,41,대구\n'],
    ['windows-1251', 'Все люди рождаются свободными и равными в своем достоинстве и правах.'],
    ['koi8-r', 'Все люди рождаются свободными и равными в своем достоинстве и правах.'],
    ['iso-8859-7', 'Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα.'],
    ['iso-8859-2', 'Imię,Miasto\nŁukasz Żółć,Łódź\nGrzegorz Brzęczyszczykiewicz,Chrząszczyżewoszyce\n'],
    ['windows-1252', 'Name,Stadt\nJürgen Müller,Köln\nFrançois Décès,Orléans\nSeñor Niño,Málaga\n'],
  ];
  for (const [encoding, text] of samples) {
    test(`${encoding}: detected and decoded, for a file and for an undeclared web response`, () => {
      const bytes = encodeLegacy(text, encoding);
      assert.equal(detectCharset(bytes), encoding);
      assert.deepEqual(decodeText(bytes, '', false, 'file'), { text, encoding });
      assert.deepEqual(decodeText(bytes, 'text/plain', false), { text, encoding });
    });
  }

  test('ISO-2022-JP (7-bit, so valid UTF-8 too) is recognised by its escape sequences', () => {
    const jis = Buffer.from(encodeLegacy('吾輩は猫である。', 'euc-jp').map((b) => b - 0x80));
    const bytes = Buffer.concat([Buffer.from('\x1b$B'), jis, Buffer.from('\x1b(B\n')]);
    assert.deepEqual(decodeText(bytes, '', false, 'file'), { text: '吾輩は猫である。\n', encoding: 'iso-2022-jp' });
  });

  test('UTF-8 with a stray bad byte stays UTF-8; a declared charset is never second-guessed', () => {
    const bytes = Buffer.concat([Buffer.from('Grüße aus Köln — “naïve” café, ü ö ä é', 'utf8'), Buffer.from([0xff])]);
    assert.deepEqual(decodeText(bytes, '', false, 'file'), {
      text: 'Grüße aus Köln — “naïve” café, ü ö ä é\ufffd',
      encoding: 'utf-8',
    });
    const sjis = encodeLegacy('テスト', 'shift_jis');
    assert.equal(decodeText(sjis, 'text/plain; charset=euc-kr', false, 'file').encoding, 'euc-kr');
  });

  test('binary bytes under a text type (a PDF served as text/html) decode without throwing', () => {
    const bytes = Buffer.concat([
      Buffer.from('%PDF-1.7\n'),
      Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256)),
    ]);
    assert.equal(typeof decodeText(bytes, 'text/html', true).text, 'string');
    assert.equal(typeof decodeText(bytes, '', false, 'file').text, 'string');
  });

  test('a Shift-JIS CSV is detected as a CSV (its text is not taken for binary)', () => {
    const bytes = encodeLegacy('商品名,価格,在庫\nりんご,120,35\nみかん,80,120\nぶどう,450,8\n', 'shift_jis');
    assert.equal(detectDocument(bytes, { fileName: 'data.csv' }).kind, 'csv');
    assert.equal(detectDocument(bytes).kind, 'csv');
  });
});
