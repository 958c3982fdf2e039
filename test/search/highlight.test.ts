// Search highlights (src/search/highlight.ts): the passage of a page that best matches the query,
// cut around its first match; the query's web-search syntax left out.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HIGHLIGHT_MAX_CHARS, firstPassage, highlightOf, queryWords } from '../../src/search/highlight.ts';

const page = `# Otters

Otters are playful mammals of rivers and coasts.

## Food

- Sea otters eat urchins and crack shellfish open with stones.
- River otters mostly eat fish.

## Habitat

${'Long filler text about nothing in particular. '.repeat(12)}Sea otters sleep holding hands in kelp forests. ${'More filler after the match, going on and on. '.repeat(12)}
`;

describe('search highlights', () => {
  test("the query's words, without excluded words, quotes and or", () => {
    assert.equal(queryWords('"sea otter" or kelp -river -"fresh water"'), 'sea otter kelp');
    assert.equal(queryWords('-only'), '');
  });

  test('the best passage for the query, as plain text', () => {
    assert.equal(highlightOf(page, 'urchins'), 'Sea otters eat urchins and crack shellfish open with stones.');
    // Stemmed: "stone" meets "stones".
    assert.equal(highlightOf(page, 'stone shellfish'), 'Sea otters eat urchins and crack shellfish open with stones.');
    assert.equal(highlightOf(page, 'giraffe'), undefined);
    assert.equal(highlightOf('', 'otters'), undefined);
    assert.equal(highlightOf(page, '-urchins'), undefined);
  });

  test('a long passage is cut around its first match, at spaces, with ellipses', () => {
    const h = highlightOf(page, 'kelp')!;
    assert.ok(h.length <= HIGHLIGHT_MAX_CHARS + 2, `${h.length}`);
    assert.match(h, /^….*Sea otters sleep holding hands in kelp forests\..*…$/);
    assert.doesNotMatch(h, /^… /);
  });

  test('the first passage when nothing matches', () => {
    assert.equal(firstPassage(page), 'Otters are playful mammals of rivers and coasts.');
    assert.equal(firstPassage(null), '');
  });
});
