import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanMarkdown } from '../../src/extractors/clean-content.ts';

test('removes boilerplate, keeps content', () => {
  const input = `[Home](/) › [Blog](/blog) › Post

# Title

We use cookies to improve your experience. Accept our cookie policy.

Real prose with an [inline link](https://x.test) stays.

- [Home](/)
- [About](/about)
- [Contact](/contact)

![Diagram](/d.png)

| a | b |
|---|---|
| 1 | 2 |

\`\`\`js
share on twitter
\`\`\`

Share on Twitter

[Read more](/more)

Subscribe to our newsletter
`;
  const r = cleanMarkdown(input);
  assert.equal(
    r.markdown,
    `# Title

Real prose with an [inline link](https://x.test) stays.

![Diagram](/d.png)

| a | b |
|---|---|
| 1 | 2 |

\`\`\`js
share on twitter
\`\`\`
`,
  );
  assert.equal(r.removed, 8);
});

test('nothing to remove → input unchanged', () => {
  const md = '# A\n\nSome text here.\n\n- one item\n- two items\n';
  assert.deepEqual(cleanMarkdown(md), { markdown: md, removed: 0 });
});
