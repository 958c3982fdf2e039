// extractiveSummary: picks an article's key sentences in document order, drops Markdown furniture
// (code, tables, images, URLs, headings), respects maxSentences/maxChars, is deterministic, and splits
// sentences around abbreviations, initials, decimals and ellipses.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extractiveSummary, splitSentences } from '../../src/scrape/formats/summary.ts';

const ARTICLE = `# Solar Sails Reach Mars Orbit

![Sail over Mars](https://img.example.com/sail.png)

*By Jane Doe, 12 Nov 2026*

The Helios probe became the first spacecraft to reach Mars orbit using only a solar sail for propulsion. The mission, led by the European Space Agency, took 14 months and cost approx. 3.5 million euros less than a chemical rocket launch.

Solar sails use the pressure of sunlight on a vast reflective sheet to accelerate a spacecraft without any fuel. The Helios sail measures 40 metres across and is thinner than a human hair. Engineers at ESA said the sail performed better than expected during the Mars approach.

## How it works

Photons carry momentum, e.g. when they bounce off a mirror they push it slightly. Over months, this tiny push adds up to speeds that rival chemical rockets. Dr. Maria Lopez, the mission lead, compared it to "sailing on light".

\`\`\`python
thrust = 2 * power / c  # solar sail Mars orbit propulsion spacecraft
\`\`\`

| Mission | Year | Sail |
|---|---|---|
| IKAROS solar sail spacecraft | 2010 | Mars orbit |

Subscribe to our newsletter for more space news!

## What's next

The team now plans a solar sail mission to the outer planets. Funding for the Mars orbit follow-up was approved by the U.S. Congress and the EU in October. Click [here](https://example.com/more) to read more.
`;

const LEAD = 'The Helios probe became the first spacecraft to reach Mars orbit using only a solar sail for propulsion.';
const HOW =
  'Solar sails use the pressure of sunlight on a vast reflective sheet to accelerate a spacecraft without any fuel.';

/** Position of each summary sentence in the article: must be increasing (document order). */
function positions(summary: string): number[] {
  return splitSentences(summary).map((s) => ARTICLE.indexOf(s));
}

describe('extractiveSummary: sample article', () => {
  const summary = extractiveSummary(ARTICLE);

  test('includes the key sentences', () => {
    assert.ok(summary.startsWith(LEAD), summary);
    assert.ok(summary.includes(HOW), summary);
    assert.ok(summary.includes('The team now plans a solar sail mission to the outer planets.'), summary);
  });

  test('excludes boilerplate, calls to action and bylines', () => {
    assert.ok(!summary.includes('Subscribe'), summary);
    assert.ok(!summary.includes('Click'), summary);
    assert.ok(!summary.includes('Jane Doe'), summary);
  });

  test('drops Markdown furniture: headings, images, URLs, code, tables', () => {
    for (const s of [
      'Solar Sails Reach Mars Orbit',
      'How it works',
      'Sail over Mars',
      'https://',
      'thrust',
      'IKAROS',
      '|',
      '#',
      '![',
      '](',
    ]) {
      assert.ok(!summary.includes(s), `${s} in ${summary}`);
    }
  });

  test('sentences are whole article sentences, in document order', () => {
    const pos = positions(summary);
    assert.ok(
      pos.every((p) => p >= 0),
      JSON.stringify(pos),
    );
    assert.deepEqual(
      pos,
      [...pos].sort((a, b) => a - b),
    );
  });

  test('default limits: at most 5 sentences and 1000 characters', () => {
    assert.equal(splitSentences(summary).length, 5);
    assert.ok(summary.length <= 1000);
  });

  test('maxSentences', () => {
    assert.equal(extractiveSummary(ARTICLE, { maxSentences: 1 }), LEAD);
    assert.equal(extractiveSummary(ARTICLE, { maxSentences: 2 }), `${LEAD} ${HOW}`);
    assert.equal(extractiveSummary(ARTICLE, { maxSentences: 0 }), '');
  });

  test('maxChars', () => {
    for (const maxChars of [60, 120, 200, 300, 500]) {
      const s = extractiveSummary(ARTICLE, { maxChars });
      assert.ok(s.length > 0 && s.length <= maxChars, `${maxChars}: ${s.length}`);
    }
    // Room for the lead only.
    assert.equal(extractiveSummary(ARTICLE, { maxChars: LEAD.length + 5 }), LEAD);
  });

  test('a best sentence longer than maxChars is cut at a word boundary', () => {
    const s = extractiveSummary(ARTICLE, { maxChars: 40 });
    assert.ok(s.length <= 40, s);
    assert.ok(s.endsWith('…'), s);
    assert.ok(LEAD.startsWith(s.slice(0, -1)), s);
  });

  test('deterministic, and line endings do not matter', () => {
    assert.equal(extractiveSummary(ARTICLE), summary);
    assert.equal(extractiveSummary(ARTICLE.replace(/\n/g, '\r\n')), summary);
  });
});

describe('extractiveSummary: edge cases', () => {
  test('empty and near-empty input gives an empty string', () => {
    for (const md of [
      '',
      '   \n\n',
      '# Hi',
      'Hello world.',
      '```\ncode only here and more\n```',
      '| a | b |\n|---|---|\n| 1 | 2 |',
      '![alt text image](x.png)',
    ]) {
      assert.equal(extractiveSummary(md), '', JSON.stringify(md));
    }
  });

  test('headings only count as sentences when the document has nothing else', () => {
    assert.equal(
      extractiveSummary('# Release notes\n\n## Faster parsing\n\n## Smaller bundles'),
      'Release notes Faster parsing Smaller bundles',
    );
    assert.equal(
      extractiveSummary('# Title words\n\nOne real sentence about the title words.'),
      'One real sentence about the title words.',
    );
  });

  test('title words raise a sentence', () => {
    const md =
      '# Battery recycling\n\nThe weather was mild all week in the valley town. Battery recycling plants recover lithium and cobalt from old cells. Local markets sold apples and pears on Sunday.';
    assert.equal(
      extractiveSummary(md, { maxSentences: 1 }),
      'Battery recycling plants recover lithium and cobalt from old cells.',
    );
  });

  test('near-duplicate sentences are not both chosen', () => {
    const md =
      'Rust compiles to fast native code. Rust compiles to fast native code! Go has a garbage collector and goroutines.';
    assert.equal(
      extractiveSummary(md, { maxSentences: 2 }),
      'Rust compiles to fast native code. Go has a garbage collector and goroutines.',
    );
  });

  test('link text stays, URLs go; emphasis and inline code are unwrapped', () => {
    const md =
      'Read [the **official** guide](https://example.com/guide "Guide") before running `npm test` on your machine.';
    assert.equal(extractiveSummary(md), 'Read the official guide before running npm test on your machine.');
  });

  test('abbreviations do not split sentences inside the summary', () => {
    const md =
      '# Dr. Lopez\n\nDr. Maria Lopez of the U.S. team measured 3.14 metres, e.g. with a laser, at 5 p.m. on Friday. It was a record.';
    assert.equal(
      extractiveSummary(md, { maxSentences: 1 }),
      'Dr. Maria Lopez of the U.S. team measured 3.14 metres, e.g. with a laser, at 5 p.m. on Friday.',
    );
  });
});

describe('splitSentences', () => {
  test('abbreviations, initials, decimals, acronyms and ellipses', () => {
    assert.deepEqual(
      splitSentences(
        'Dr. Smith arrived at 3.14 p.m. with the U.S. team. It was late... Then he left! Really? Yes. He moved to the U.S. The end. See e.g. Fig. 3 for details. J. R. R. Tolkien wrote it. Wait... what happened? Prices rose approx. 5% vs. last year.',
      ),
      [
        'Dr. Smith arrived at 3.14 p.m. with the U.S. team.',
        'It was late...',
        'Then he left!',
        'Really?',
        'Yes.',
        'He moved to the U.S.',
        'The end.',
        'See e.g. Fig. 3 for details.',
        'J. R. R. Tolkien wrote it.',
        'Wait... what happened?',
        'Prices rose approx. 5% vs. last year.',
      ],
    );
  });

  test('closing quotes and brackets stay with their sentence', () => {
    assert.deepEqual(splitSentences('She said "Go home." Then (quietly.) He left.'), [
      'She said "Go home."',
      'Then (quietly.)',
      'He left.',
    ]);
  });

  test('Inc./etc. end a sentence only before a typical opener', () => {
    assert.deepEqual(splitSentences('Made by Acme Inc. The firm grew. Apples, pears, etc. Bananas too.'), [
      'Made by Acme Inc.',
      'The firm grew.',
      'Apples, pears, etc. Bananas too.',
    ]);
  });
});
