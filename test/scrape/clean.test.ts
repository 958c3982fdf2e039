// cleanDocument's option semantics: always-removed elements, excludeTags, includeTags (document
// order, nested matches once, skipping main-content detection), blockAds (token matching, not
// substrings), hidden elements, onlyMainContent's boilerplate stripping and its fallbacks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AnyNode } from 'domhandler';
import { isTag } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { type CleanOptions, cleanDocument, validateSelectors } from '../../src/scrape/transform/clean.ts';
import { blockText } from './main-content/score.ts';
import { domToMarkdown } from '../../src/markdown/markdown.ts';

function clean(html: string, opts: Partial<CleanOptions> = {}): AnyNode[] {
  return cleanDocument(parseDocument(html), { onlyMainContent: false, ...opts });
}
function text(html: string, opts: Partial<CleanOptions> = {}): string {
  return blockText(clean(html, opts));
}

const prose = (word: string, n = 6) =>
  `<p>${Array.from({ length: n }, (_, i) => `${word} sentence number ${i}, which is long enough to count as prose for the scorer.`).join(' ')}</p>`;

describe('always removed', () => {
  test('scripts, styles, embeds, head and hidden elements', () => {
    const html = `<html><head><title>T</title><meta name="x" content="y"><link rel="stylesheet" href="a.css"></head><body>
      <script>var secret = 1;</script><style>.a{}</style><noscript>enable js</noscript><template><p>tpl</p></template>
      <iframe src="x"></iframe><object data="x">obj</object><embed src="x"><svg><text>vector</text></svg><canvas>cnv</canvas>
      <p>visible</p><p hidden>hidden attr</p><p aria-hidden="true">aria</p><p style="color:red; display: none">styled</p>
      <p style="visibility:hidden">invisible</p><dialog><p>closed dialog</p></dialog><dialog open><p>open dialog</p></dialog><!-- a comment -->
    </body></html>`;
    assert.equal(text(html), 'visible\nopen dialog');
  });

  test('a hidden wrapper holding the whole page is kept (content revealed by script)', () => {
    const html = `<body><div style="display:none" id="app">${prose('Article')}${prose('More')}</div><div hidden>small hidden note</div></body>`;
    const t = text(html, { onlyMainContent: true });
    assert.match(t, /Article sentence number 0/);
    assert.doesNotMatch(t, /small hidden note/);
  });

  test('a hidden wrapper holding the whole page is rendered to markdown (streamed page)', () => {
    const html = `<body><div hidden id="S:0">${prose('Streamed')}</div><div hidden>small hidden note</div></body>`;
    const md = domToMarkdown(clean(html, { onlyMainContent: true }), { baseUrl: 'https://x.test/' });
    assert.match(md, /Streamed sentence number 0/);
    assert.doesNotMatch(md, /small hidden note/);
  });

  test('a body left empty by scripts falls back to its <noscript> content; otherwise noscript is dropped', () => {
    const shell = (extra: string) =>
      `<body><div id="app"></div>${extra}<noscript><div class="post"><p>by alice</p>${prose('Thread')}</div></noscript></body>`;
    const md = domToMarkdown(clean(shell(''), { onlyMainContent: true }), { baseUrl: 'https://x.test/' });
    assert.match(md, /Thread sentence number 0/);
    assert.match(md, /by alice/);
    const t = text(shell(prose('Visible', 8)), { onlyMainContent: true });
    assert.match(t, /Visible sentence/);
    assert.doesNotMatch(t, /Thread sentence/);
  });

  test('a fragment without <html>/<body> works', () => {
    assert.equal(text('<p>hello</p><script>x</script>'), 'hello');
    assert.equal(text('<p>hello</p>', { onlyMainContent: true }), 'hello');
  });
});

describe('excludeTags and includeTags', () => {
  const page = `<body><nav class="menu">Menu</nav><section id="one"><h2>One</h2><p class="note">first note</p><div class="promo">buy now</div></section>
    <aside class="note">side note</aside><section id="two"><h2>Two</h2><p>second</p></section><footer>foot</footer></body>`;

  test('excludeTags removes every match', () => {
    assert.equal(text(page, { excludeTags: ['.promo', 'footer', 'nav'] }), 'One\nfirst note\nside note\nTwo\nsecond');
  });

  test('includeTags returns the matches in document order, a match inside a match once', () => {
    const nodes = clean(page, { includeTags: ['#two', '.note', 'section'] });
    assert.deepEqual(
      nodes.map((n) => (isTag(n) ? `${n.name}${n.attribs.id ? '#' + n.attribs.id : '.' + n.attribs.class}` : n.type)),
      ['section#one', 'aside.note', 'section#two'],
    );
  });

  test('excludeTags applies before includeTags', () => {
    assert.equal(text(page, { includeTags: ['#one'], excludeTags: ['.promo'] }), 'One\nfirst note');
  });

  test('includeTags skips main-content detection (navigation can be asked for)', () => {
    assert.equal(text(page, { includeTags: ['nav'], onlyMainContent: true }), 'Menu');
  });

  test('includeTags that match nothing give nothing', () => {
    assert.deepEqual(clean(page, { includeTags: ['table'] }), []);
  });

  test('an explicitly included ad is kept; ads inside an included element are not', () => {
    const html = `<body><div class="ad-slot">sponsored box</div><article><p>text</p><div class="ad-slot">inner ad</div></article></body>`;
    assert.equal(text(html, { includeTags: ['.ad-slot'] }), 'sponsored box\ninner ad');
    assert.equal(text(html, { includeTags: ['article'] }), 'text');
  });

  test('invalid selectors are a 400', () => {
    assert.throws(
      () => clean(page, { includeTags: ['p', 'div[unclosed'] }),
      (e: any) => e.statusCode === 400 && /div\[unclosed/.test(e.message),
    );
    assert.throws(
      () => clean(page, { excludeTags: ['::'] }),
      (e: any) => e.statusCode === 400,
    );
    assert.throws(
      () => validateSelectors(['a', '>>>'], 'includeTags'),
      (e: any) => e.code === 'BAD_REQUEST',
    );
    validateSelectors(['a', 'div > p.x', '[data-x="1"]']);
  });
});

describe('blockAds', () => {
  const ads = [
    '<div class="ad-banner">ad banner</div>',
    '<div id="div-gpt-ad-1234-0">gpt slot</div>',
    '<ins class="adsbygoogle" data-ad-client="ca-pub-1">adsense</ins>',
    '<div class="AdSlot">camel ad</div>',
    '<div class="sponsored-content">sponsored</div>',
    '<div id="cookie-banner">we use cookies</div>',
    '<div class="cookie-consent">consent text</div>',
    '<div id="onetrust-banner-sdk">onetrust</div>',
    '<div class="gdpr-notice">gdpr</div>',
    '<div class="newsletter-popup">subscribe popup</div>',
    '<div data-ad-slot="top">data attr ad</div>',
    '<amp-ad type="x">amp ad</amp-ad>',
  ];
  const legit = [
    '<div class="masthead">masthead</div>',
    '<div class="header">header class</div>',
    '<a class="download-button">download</a>',
    '<div class="shadow">shadow</div>',
    '<div id="readme">readme</div>',
    '<div class="address">address</div>',
    '<div class="loading">loading</div>',
    '<div class="badge">badge</div>',
    '<div class="cookie-recipe">cookie recipe</div>',
    '<div class="adventure">adventure</div>',
    '<div class="newsletter-archive">newsletter archive</div>',
  ];
  const html = `<body>${ads.join('')}${legit.join('')}</body>`;

  test('removes ads and consent banners by class/id tokens, keeps look-alikes', () => {
    const t = text(html, { blockAds: true });
    assert.equal(
      t,
      'masthead\nheader class\ndownload\nshadow\nreadme\naddress\nloading\nbadge\ncookie recipe\nadventure\nnewsletter archive',
    );
  });

  test('is on by default and keeps everything when off', () => {
    assert.equal(text(html), text(html, { blockAds: true }));
    const off = text(html, { blockAds: false });
    for (const s of ['ad banner', 'gpt slot', 'we use cookies', 'onetrust', 'amp ad']) assert.match(off, new RegExp(s));
  });

  test('an "ad" element holding most of the page is not removed', () => {
    const t = text(
      `<body><div class="cookie-banner-wrapper">${prose('Recipe', 10)}</div><div class="ad">x</div></body>`,
    );
    assert.match(t, /Recipe sentence number 9/);
  });
});

describe('onlyMainContent', () => {
  const article = `<article class="post"><h1>Headline</h1>${prose('Body')}${prose('Second')}
    <div class="share-buttons"><a href="#">Share on X</a><a href="#">Email</a></div>
    <ul class="related-posts"><li><a href="/a">Related one</a></li><li><a href="/b">Related two</a></li></ul></article>`;
  const page = `<body><a class="skip-link" href="#main">Skip to content</a><header class="site-header"><a href="/">Logo</a><nav><a href="/x">Home</a><a href="/y">About</a></nav></header>
    <div class="layout"><main id="main">${article}<section id="comments" class="comments-area"><h2>3 comments</h2>
    <div class="comment"><p>${'A reader comment that is rather long and full of opinions. '.repeat(4)}</p></div></section></main>
    <aside class="sidebar"><div class="widget"><h3>About</h3><p>${'Sidebar biography text of the author of this blog. '.repeat(3)}</p></div></aside></div>
    <footer class="site-footer"><p>Copyright 2026 Example Ltd. All rights reserved, and more footer text.</p></footer>
    <div class="cookie-notice">We use cookies. <button>Accept</button></div></body>`;

  test('keeps the article and drops layout, share bars, related links, comments and banners', () => {
    const t = text(page, { onlyMainContent: true, blockAds: false });
    assert.match(t, /^Headline\nBody sentence number 0/);
    assert.match(t, /Second sentence number 5/);
    for (const s of [
      'Skip to content',
      'Logo',
      'Home',
      'Share on X',
      'Related one',
      'reader comment',
      'Sidebar',
      'Copyright',
      'cookies',
    ]) {
      assert.doesNotMatch(t, new RegExp(s), s);
    }
  });

  test('a listing keeps its link-dense item lists; an article drops its link-dense blocks', () => {
    const items = (n: number, w: string) =>
      `<ul class="grid">${Array.from({ length: n }, (_, i) => `<li><a href="/p/${i}">${w} item ${i} with a longer title</a></li>`).join('')}</ul>`;
    const listing = `<body><nav><a href="/">Home</a><a href="/c">Catalog</a></nav><main><h1>All products</h1>
      <p>Browse the range.</p>${items(12, 'Listed')}${items(12, 'More')}</main></body>`;
    const t = text(listing, { onlyMainContent: true });
    assert.match(t, /Listed item 11 with a longer title/);
    assert.match(t, /More item 0 with a longer title/);
    assert.doesNotMatch(t, /Catalog/);
    const articlePage = `<body><main><h1>Story</h1>${prose('Story', 8)}${items(6, 'Linked')}</main></body>`;
    const a = text(articlePage, { onlyMainContent: true });
    assert.match(a, /Story sentence number 7/);
    assert.doesNotMatch(a, /Linked item/);
  });

  test('a block repeated with the same tag and text (a mobile and a desktop copy) is kept once', () => {
    const html = `<body><main><div class="mobile"><h1>Product title here</h1><p>Price is 35 dollars today</p></div>
      <div class="desktop"><h1>Product title here</h1><p>Price is 35 dollars today</p>${prose('Description')}</div>
      <ul><li>Product title here</li></ul><p>Yes</p><p>Yes</p></main></body>`;
    const t = text(html, { onlyMainContent: true });
    assert.equal(t.match(/Product title here/g)?.length, 2, t);
    assert.equal(t.match(/Price is 35 dollars/g)?.length, 1, t);
    assert.equal(t.match(/^Yes$/gm)?.length, 2, t);
    assert.match(t, /Description sentence number 5/);
  });

  test("a paragraph repeated in each item of a list of alike items (every coupon's terms) stays in each", () => {
    const coupon = (i: number) =>
      `<div class="coupon"><h2>${i * 10}% off any repair number ${i}</h2><p>Must be presented before the start of work.</p></div>`;
    const quote = `<blockquote><p>Must be presented before the start of work.</p></blockquote>`;
    // A quotation of it is a copy, in an item or not.
    const html = `<body><main><h1>Coupons</h1>${prose('Intro', 3)}<div class="coupons">${[1, 2, 3].map(coupon).join('')}
      <div class="coupon"><h2>Ask us</h2>${quote}</div></div></main></body>`;
    const t = text(html, { onlyMainContent: true });
    assert.equal(t.match(/Must be presented/g)?.length, 3, t);
    assert.match(t, /30% off any repair number 3\nMust be presented/);
  });

  test('a container whose whole text repeats an earlier one in other markup (a responsive copy) is kept once', () => {
    const feature = 'Water resistant to fifty meters, for rain, sweat and short swims in the sea';
    // The desktop copy in paragraphs, the mobile copy broken into spans: no paragraph of one matches the other.
    const desktop = `<div class="desktop"><h2>Built for water</h2><p>${feature}</p></div>`;
    const mobile = `<div class="mobile"><h2>Built for water</h2><div><span>${feature.slice(0, 30)}</span><br><span>${feature.slice(30)}</span></div></div>`;
    const code = `<div class="example"><pre>{"id": "ch_1", "object": "charge", "amount": 1099, "currency": "usd"}</pre></div>`;
    // List items repeat on purpose (each offer's terms), and so does code (a request and its response).
    const terms = `<li>${'Offer valid on new bookings made before the end of the month only. '.repeat(2)}</li>`;
    const html = `<body><main><h1>Watch</h1>${prose('Description', 6)}${desktop}${mobile}
      <h2>Offer one</h2><ul>${terms}</ul><h2>Offer two</h2><ul>${terms}</ul>${code}${code}</main></body>`;
    const t = text(html, { onlyMainContent: true });
    assert.equal(t.match(/Water resistant/g)?.length, 1, t);
    assert.match(t, /Description sentence number 5/);
    assert.equal(t.match(/Offer valid on new bookings/g)?.length, 4, t);
    assert.equal(t.match(/"object": "charge"/g)?.length, 2, t);
  });

  test("a product's customer reviews widget is dropped like a comment section", () => {
    const review = `<div class="review"><p>${'Great bag, the straps are comfortable and it holds a lot. '.repeat(2)}</p></div>`;
    const html = `<body><main><h1>Trail Pack</h1>${prose('Description', 8)}
      <section id="reviews"><h2>159 reviews</h2>${review}${review}</section></main></body>`;
    const t = text(html, { onlyMainContent: true });
    assert.match(t, /Description sentence number 7/);
    assert.doesNotMatch(t, /Great bag/);
  });

  test('a listing whose items are links is the content, not the short blurb beside it', () => {
    const cards = Array.from(
      { length: 30 },
      (_, i) =>
        `<div class="card"><a href="/c/${i}"><h3>Certificate program number ${i}</h3><span>Online, 6 weeks</span></a></div>`,
    ).join('');
    const html = `<body><nav><a href="/">Home</a><a href="/about">About us</a></nav><div class="page"><div class="region">
      <div class="field"><div class="field-item"><div class="text"><p>Solve problems. Grow your network. Accelerate your career with one of our programs.</p></div></div></div>
      <div class="grid">${cards}</div></div></div><footer><p>Copyright notice of the school</p></footer></body>`;
    const t = text(html, { onlyMainContent: true });
    assert.match(t, /Solve problems/);
    assert.match(t, /Certificate program number 0/);
    assert.match(t, /Certificate program number 29/);
    assert.doesNotMatch(t, /About us|Copyright/);
  });

  test('a long run of prose is kept whatever its class; a short or link-dense "toc"/"related" block is not', () => {
    const html = `<body><main><h1>Forming a company</h1><nav class="toc"><a href="#s1">Section one</a><a href="#s2">Two</a></nav>
      <section class="toc-para" id="s1">${prose('Filing', 9)}</section><section class="toc-para" id="s2">${prose('Naming', 9)}</section>
      <div class="related"><p>Related short teaser text</p></div></main></body>`;
    const t = text(html, { onlyMainContent: true });
    assert.match(t, /Filing sentence number 8/);
    assert.match(t, /Naming sentence number 8/);
    assert.doesNotMatch(t, /Section one|Related short teaser/);
  });

  test('comments longer than the article above them are still not the content', () => {
    const comment = (i: number) =>
      `<li class="comment"><p>Reader ${i} says: ${'I tried this spray on my tomatoes and it worked well enough. '.repeat(3)}</p></li>`;
    const comments = `<div class="feedback"><h3>50 Comments</h3><ol>${Array.from({ length: 50 }, (_, i) => comment(i)).join('')}</ol></div>`;
    const blog = `<body><div class="wrap"><h1>Garden spray</h1><div class="entry">${prose('Recipe', 30)}</div>${comments}</div></body>`;
    const t = text(blog, { onlyMainContent: true });
    assert.match(t, /Recipe sentence number 29/);
    assert.doesNotMatch(t, /Reader 0 says/);
  });

  test('onlyMainContent=false keeps the whole body (minus always-removed)', () => {
    const t = text(page, { onlyMainContent: false, blockAds: false });
    for (const s of ['Logo', 'Home', 'reader comment', 'Sidebar', 'Copyright', 'cookies'])
      assert.match(t, new RegExp(s), s);
  });

  test('keeps the page title when it sits outside the article body', () => {
    const html = `<body><div class="hero"><h1>Outside Title</h1></div><div class="wrap"><div class="article-body">${prose('Story', 8)}</div>
      <div class="rail"><p>${'Unrelated rail text that goes on. '.repeat(8)}</p></div></div></body>`;
    const t = text(html, { onlyMainContent: true });
    assert.match(t, /^Outside Title\nStory sentence number 0/);
  });

  test('keeps tables, code blocks, lists and figure captions inside the content', () => {
    const html = `<body><nav><a href="/">Home</a></nav><div class="entry-content">${prose('Intro')}
      <table><tr><th>Key</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
      <pre><code><span class="hljs-comment"># keep this comment</span>\nprint(1)</code></pre>
      <ul><li>first item</li><li>second item</li></ul>
      <figure><img src="x.png" alt="x"><figcaption>A caption</figcaption></figure></div></body>`;
    const t = text(html, { onlyMainContent: true });
    for (const s of ['Key', 'Value', '# keep this comment', 'print\\(1\\)', 'first item', 'A caption'])
      assert.match(t, new RegExp(s), s);
    assert.doesNotMatch(t, /Home/);
  });

  test('forum threads keep their posts even when marked as comments', () => {
    const posts = Array.from(
      { length: 4 },
      (_, i) =>
        `<div class="comment post"><div class="author"><a href="/u/${i}">user${i}</a></div><p>${`Post ${i} says something substantial about the topic at hand. `.repeat(3)}</p></div>`,
    ).join('');
    const t = text(
      `<body><header><a href="/">Forum</a></header><div class="thread"><h1>Thread title</h1>${posts}</div><footer>Forum footer text</footer></body>`,
      { onlyMainContent: true },
    );
    assert.match(t, /Thread title/);
    for (let i = 0; i < 4; i++) assert.match(t, new RegExp(`Post ${i} says`));
    assert.doesNotMatch(t, /Forum footer/);
  });

  test('a listing page keeps every item', () => {
    const items = Array.from(
      { length: 5 },
      (_, i) =>
        `<article class="card"><h2><a href="/p/${i}">Item title ${i}</a></h2><p>${`Excerpt ${i} of the post, describing it briefly. `.repeat(2)}</p></article>`,
    ).join('');
    const t = text(
      `<body><nav><a href="/">Home</a><a href="/b">Blog</a></nav><main><h1>Archive</h1>${items}</main></body>`,
      { onlyMainContent: true },
    );
    assert.match(t, /^Archive/);
    for (let i = 0; i < 5; i++) assert.match(t, new RegExp(`Item title ${i}\\nExcerpt ${i}`));
    assert.doesNotMatch(t, /Home/);
  });

  test('never empty when the body has text: falls back to the body without its layout, then the whole body', () => {
    // Only boilerplate-looking text.
    const t1 = text(
      `<body><header><a href="/">Site</a></header><div class="sidebar"><p>The only real text is in a sidebar.</p></div><footer>Footer</footer></body>`,
      { onlyMainContent: true },
    );
    assert.match(t1, /The only real text is in a sidebar\./);
    assert.doesNotMatch(t1, /Footer/);
    // Only navigation.
    const t2 = text(`<body><nav><a href="/a">Alpha</a> <a href="/b">Beta</a></nav></body>`, { onlyMainContent: true });
    assert.match(t2, /Alpha/);
    // A page of links (an index).
    const links = Array.from({ length: 30 }, (_, i) => `<li><a href="/${i}">Link number ${i}</a></li>`).join('');
    const t3 = text(`<body><ul>${links}</ul></body>`, { onlyMainContent: true });
    assert.match(t3, /Link number 0\n[\s\S]*Link number 29/);
    // Nothing at all.
    assert.deepEqual(clean('<body></body>', { onlyMainContent: true }), []);
  });

  test('mutates the document it is given and returns nodes of it', () => {
    const doc = parseDocument(page);
    const nodes = cleanDocument(doc, { onlyMainContent: true });
    let root: AnyNode = nodes[0];
    while (root.parent) root = root.parent;
    assert.equal(root, doc);
  });
});

describe('pages without a <body> tag', () => {
  test('main-content detection still applies', () => {
    const html = `<!doctype html><title>Minimal</title><nav><a href="/">Home</a> <a href="/about">About</a></nav><div class="content"><h1>Minimal page</h1>${prose('Body', 4)}</div><footer>Footer text here</footer>`;
    const t = text(html, { onlyMainContent: true });
    assert.match(t, /^Minimal page\nBody sentence number 0/);
    assert.doesNotMatch(t, /Home|Footer|Minimal\n/);
    assert.equal(text(html).split('\n')[0], 'Home About');
    assert.match(text(html), /Footer text here$/);
  });
});

describe('page-kind rules (what the page declares: JSON-LD, microdata, og:type)', () => {
  const main = (head: string, body: string, url = 'https://shop.example/p/1') =>
    blockText(
      cleanDocument(parseDocument(`<html><head>${head}</head><body>${body}</body></html>`), {
        onlyMainContent: true,
        url,
      }),
    );
  const card = (i: number, href: string) =>
    `<div class="card"><img src="/i${i}.jpg"><h3><a href="${href}">Other story ${i}</a></h3><p>A short teaser of story ${i}.</p></div>`;
  const rail = (href: (i: number) => string) =>
    `<h2>Related stories</h2><div class="grid">${[1, 2, 3, 4].map((i) => card(i, href(i))).join('')}</div>`;

  test('after an article, a rail of cards linking elsewhere on the site goes, with its title', () => {
    const t = main('', `<div><h1>Story</h1>${prose('Body', 8)}${rail((i) => `/story/${i}`)}</div>`);
    assert.match(t, /Body sentence number 7/);
    assert.doesNotMatch(t, /Other story|Related stories|teaser/);
  });

  test('cards stay when they are the page (an index), lead it, link another site or a part of the page', () => {
    // An index: the cards are most of the text.
    const index = main('', `<div><h1>Stories</h1><p>All our stories.</p>${rail((i) => `/story/${i}`)}</div>`);
    assert.match(index, /Other story 1[\s\S]*Other story 4/);
    // Before the prose (a collection grid above its description).
    const lead = main('', `<div><h1>Shoes</h1>${rail((i) => `/story/${i}`)}${prose('Body', 8)}</div>`);
    assert.match(lead, /Other story 1/);
    // Another site (a reading list) and the page's own anchors (an accordion).
    for (const href of [(i: number) => `https://elsewhere.example/${i}`, (i: number) => `#q${i}`]) {
      const t = main('', `<div><h1>Story</h1>${prose('Body', 8)}${rail(href)}</div>`);
      assert.match(t, /Other story 1[\s\S]*Other story 4/);
    }
  });

  test("cards linking pages below this one are the page's parts (a hub), not a rail", () => {
    const body = `<div><h1>HR consulting</h1>${prose('Body', 8)}${rail((i) => `/services/hr/part-${i}/`)}</div>`;
    assert.match(main('', body, 'https://firm.example/services/hr/'), /Other story 1[\s\S]*Other story 4/);
    // Beside the page (a sibling), they are a rail.
    assert.doesNotMatch(main('', body, 'https://firm.example/services/payroll/'), /Other story 1/);
  });

  test('beside an article, cards linked whole (picture and title in one link) are a rail too', () => {
    const linked = (i: number) =>
      `<div class="summary"><a href="/blog/post-${i}"><img src="/i${i}.jpg"><h3>Other post ${i}</h3></a><p>${'A teaser of the other post. '.repeat(4)}</p></div>`;
    const body = `<article><h1>Calculators</h1>${prose('Body', 8)}<section><h2>On a related note</h2>${[1, 2, 3].map(linked).join('')}</section></article>`;
    const article = '<meta property="og:type" content="article">';
    const t = main(article, body, 'https://blog.example/blog/calculators');
    assert.match(t, /Body sentence number 7/);
    assert.doesNotMatch(t, /Other post|On a related note/);
    // Undeclared (a service page's linked feature cards), they stay.
    assert.match(main('', body, 'https://blog.example/blog/calculators'), /Other post 1/);
  });

  test('the site is the URL host or the canonical one, with or without www', () => {
    const body = `<div><h1>Story</h1>${prose('Body', 8)}${rail((i) => `https://www.news.example/story/${i}`)}</div>`;
    assert.match(main('', body, 'http://127.0.0.1/story/0'), /Other story 1/);
    assert.doesNotMatch(
      main('<link rel="canonical" href="https://news.example/story/0">', body, 'http://127.0.0.1/story/0'),
      /Other story 1/,
    );
  });

  const product = '<script type="application/ld+json">{"@type":"Product","offers":{"@type":"Offer"}}</script>';

  test("a product's reviews go even when they outweigh its description; elsewhere long comments are a thread", () => {
    const reviews = `<div class="product-reviews">${[1, 2, 3].map((i) => `<div class="review">${prose(`Review${i}`, 4)}</div>`).join('')}</div>`;
    const body = `<div><h1>Kettle</h1><p>A steel kettle that boils a litre in three minutes, with a cool-touch handle.</p>${reviews}</div>`;
    const t = main(product, body);
    assert.match(t, /boils a litre/);
    assert.doesNotMatch(t, /Review1/);
    assert.match(main('', body), /Review1 sentence number 0[\s\S]*Review3/);
  });

  test('on a product page, the block named as its description is the content when it holds much of the prose', () => {
    const buyBox = `<div class="buy-box"><h1>Kettle</h1><p>Price 49 dollars, in stock and ready to ship today.</p>
      <p>${'Free delivery on orders over fifty dollars, returns within thirty days, no questions asked. '.repeat(6)}</p>
      <p>${'Our experts are ready to help you choose, call them any day of the week between nine and five. '.repeat(6)}</p></div>`;
    const description = `<div class="product__description">${prose('Spec', 16)}${prose('Material', 14)}</div>`;
    const body = `<main>${buyBox}<section class="details">${description}</section></main>`;
    const t = main(product, body);
    assert.match(t, /^Kettle$/m);
    assert.match(t, /Spec sentence number 15[\s\S]*Material sentence number 13/);
    assert.doesNotMatch(t, /Free delivery|Our experts|Price 49/);
    // Not a product page, or a description too short to be the content: the whole container.
    assert.match(main('', body), /Free delivery[\s\S]*Spec sentence number 11/);
    const short = `<main>${buyBox}<div class="description">${prose('Spec', 2)}</div></main>`;
    assert.match(main(product, short), /Free delivery[\s\S]*Spec sentence number 1/);
  });

  test('on a product page, headless tiles each with a price and a link elsewhere on the site are a rail', () => {
    const tile = (i: number) =>
      `<div class="tile"><a href="/p/${10 + i}">Kettle descaler pack ${i}</a><p>Removes limescale from any kettle in minutes.</p><span>$${9 + i}.99</span></div>`;
    const body = `<div><h1>Kettle</h1>${prose('Spec', 8)}<h2>Complete your order</h2><div class="row">${[1, 2, 3].map(tile).join('')}</div></div>`;
    const t = main(product, body);
    assert.match(t, /Spec sentence number 7/);
    assert.doesNotMatch(t, /descaler|Complete your order/);
    // Not a product page: the tiles stay; nor are tiles without prices a rail.
    assert.match(main('', body), /Kettle descaler pack 1/);
    assert.match(main(product, body.replace(/<span>\$\d+\.99<\/span>/g, '')), /Kettle descaler pack 1/);
  });

  test('on a product page, tiles linked by their picture are a recommendation carousel', () => {
    const tile = (i: number) =>
      `<li><a href="/p/${10 + i}"><img src="/t${i}.jpg"></a><h3>Kettle model ${i}</h3><span>$${20 + i}</span></li>`;
    const body = `<div><h1>Kettle</h1>${prose('Spec', 8)}<h2>Customers also viewed</h2><ul>${[1, 2, 3].map(tile).join('')}</ul></div>`;
    const t = main(product, body);
    assert.match(t, /Spec sentence number 7/);
    assert.doesNotMatch(t, /Kettle model|also viewed/);
    // Not a product page: no tile is linked by its heading, so the list stays.
    assert.match(main('', body), /Kettle model 1/);
    // Undeclared, but its URL names a product page (Amazon's /dp/, eBay's /itm/): a product too.
    for (const url of ['https://www.amazon.example/Kettle/dp/B0D1XD1ZV3', 'https://www.ebay.example/itm/276702815108'])
      assert.doesNotMatch(main('', body, url), /Kettle model/, url);
    // A blog's /p/ path, or /products/ (software vendors, category pages), says nothing.
    for (const url of ['https://blog.example/p/kettle-review', 'https://vendor.example/products/analytics'])
      assert.match(main('', body, url), /Kettle model 1/, url);
  });

  test('a boilerplate token on most of the blocks is the page builder naming them, not boilerplate', () => {
    const block = (i: number) =>
      `<div class="builder-widget"><div class="builder-widget-container"><h2>Service ${i}</h2><p>We plan, build and run service ${i} for clients who need it done properly.</p></div></div>`;
    const body = `<div class="page"><h1>Our services</h1>${[1, 2, 3, 4, 5].map(block).join('')}</div><aside><div class="widget"><p>Sidebar widget text.</p></div></aside>`;
    const t = main('', body);
    assert.match(t, /Service 1[\s\S]*Service 5/);
    assert.doesNotMatch(t, /Sidebar widget/);
    // One widget among prose is still boilerplate.
    const one = main(
      '',
      `<div><h1>Story</h1>${prose('Body', 8)}<div class="widget"><p>Follow us on the socials today.</p></div></div>`,
    );
    assert.doesNotMatch(one, /Follow us/);
  });

  test("what the page declares in its head still counts when a page builder's naming makes the filter measure twice", () => {
    // Every block classed "widget": the filter measures the page a second time, after the first walk dropped the
    // <head> and its JSON-LD. The page is still a product page: its picture-linked tiles are a carousel.
    const tile = (i: number) =>
      `<li><a href="/p/${10 + i}"><img src="/t${i}.jpg"></a><h3>Kettle model ${i}</h3><span>$${20 + i}</span></li>`;
    const block = (i: number) => `<div class="builder-widget">${prose(`Spec${i}`, 2)}</div>`;
    const body = `<div><h1>Kettle</h1>${[1, 2, 3, 4, 5].map(block).join('')}<div class="builder-widget"><h2>Customers also viewed</h2><ul>${[1, 2, 3].map(tile).join('')}</ul></div></div>`;
    const t = main(product, body);
    assert.match(t, /Spec1 sentence number 0[\s\S]*Spec5 sentence number 1/);
    assert.doesNotMatch(t, /Kettle model/);
    assert.match(main('', body), /Kettle model 1/);
  });

  test('forum post chrome: user stats panels and vote widgets go, the posts stay', () => {
    const post = (i: number) =>
      `<article class="message"><div class="message-userExtras"><dl><dt>Joined</dt><dd>Jun 29, 2016</dd><dt>Messages</dt><dd>${i}1</dd></dl></div><div class="vote-count">${i}7</div><div class="message-body">${prose(`Post${i}`, 2)}</div></article>`;
    const t = main('', `<div><h1>Thread</h1>${[1, 2, 3].map(post).join('')}</div>`, 'https://forum.example/t/1');
    assert.match(t, /Post1 sentence number 0[\s\S]*Post3 sentence number 1/);
    assert.doesNotMatch(t, /Joined|Messages|17/);
  });
});

describe('hidden, collapsed and misplaced content', () => {
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));

  test('a collapsed section a control opens (aria-controls, data-target) is content; dialogs and popovers are not', () => {
    const html = `<body><main><h1>FAQ</h1>${prose('Intro', 6)}
      <h3><button aria-controls="a1" aria-expanded="false">Does it ship abroad?</button></h3>
      <div id="a1" hidden><p>Yes, to forty countries, in five to eight days.</p></div>
      <button data-bs-target="#a2">More</button><div id="a2" style="display:none"><p>Returns are free for thirty days.</p></div>
      <button aria-controls="d1">Sign in</button><div id="d1" role="dialog" hidden><p>Your email and password please.</p></div>
      <button popovertarget="p1" aria-controls="p1">Menu</button><div id="p1" popover><p>Install our app today.</p></div>
      <div hidden><p>An unlabelled hidden note.</p></div></main></body>`;
    const t = main(html);
    assert.match(t, /forty countries/);
    assert.match(t, /free for thirty days/);
    assert.doesNotMatch(t, /email and password|Install our app|unlabelled hidden note/);
  });

  test('hidden prose is content unless hidden from assistive technology too, or a hidden <pre> data store', () => {
    const html = `<body><article><h1>Story</h1>${prose('Shown', 4)}<div style="display:none">${prose('Folded', 5)}</div>
      <div aria-hidden="true" hidden>${prose('Copy', 5)}</div><pre hidden>${'raw markdown source '.repeat(30)}</pre></article></body>`;
    const t = main(html);
    assert.match(t, /Folded sentence number 4/);
    assert.doesNotMatch(t, /Copy sentence|raw markdown/);
  });

  test('an article carrying ad-targeting attributes is no ad; a short ad is', () => {
    const html = `<body><nav>${Array.from({ length: 40 }, (_, i) => `<a href="/s${i}">Section ${i}</a>`).join(' ')}</nav>
      <article data-ad-unit="/123/site/story">${prose('Story', 14)}</article><div data-ad-slot="9">Buy now</div></body>`;
    const t = main(html);
    assert.match(t, /Story sentence number 13/);
    assert.doesNotMatch(t, /Buy now/);
  });

  test('what follows </body> or </html> belongs to the body, as a browser parses it', () => {
    const html = `<html><body><header><nav><a href="/">Home</a> <a href="/blog">Blog</a></nav></header></body></html>
      <div class="post"><h1>Late article</h1>${prose('Late', 6)}</div>`;
    const t = main(html);
    assert.match(t, /^Late article\nLate sentence number 0/);
    assert.doesNotMatch(t, /Home/);
  });
});

describe('comment sections count once', () => {
  test('a thread whose container and posts are all classed as comments still wins over a short header', () => {
    const post = (i: number) =>
      `<article class="comment post"><div class="comment-content">${prose(`Reply${i}`, 2)}</div></article>`;
    const html = `<body><main><div class="page-header"><h1>Thread title</h1><a href="/x">Share</a></div>
      <div id="comments" class="comments">${[1, 2, 3, 4].map(post).join('')}</div></main></body>`;
    const t = blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
    assert.match(t, /Reply1 sentence number 0[\s\S]*Reply4 sentence number 1/);
  });
});

describe('forms and filter panels inside the content', () => {
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));

  test('a grid of linked tiles beside a long category description stays, tile names included', () => {
    const tiles = Array.from(
      { length: 6 },
      (_, i) =>
        `<div class="thumb"><a href="/pot-${i}"><img src="/p${i}.jpg"><span class="name">Terracotta pot number ${i}</span></a><p>$${20 + i}.00</p></div>`,
    ).join('');
    const html = `<body><main><h1>Pots</h1>${prose('About', 5)}<div class="grid">${tiles}</div></main></body>`;
    const t = main(html);
    assert.match(t, /About sentence number 4/);
    assert.match(t, /Terracotta pot number 0[\s\S]*\$20\.00[\s\S]*Terracotta pot number 5/);
  });

  test('a form asking for an email, phone or password goes; a form around the content stays', () => {
    const lead = `<form><label>First Name</label><input type="text"><label>Work email</label><input type="email"><p>By submitting you agree to be contacted.</p></form>`;
    const t = main(`<body><article><h1>Guide</h1>${prose('Guide', 8)}${lead}</article></body>`);
    assert.match(t, /Guide sentence number 7/);
    assert.doesNotMatch(t, /First Name|Work email|agree to be contacted/);
    // A whole-page form (ASP.NET wraps the page in one) holds the content itself.
    const page = main(
      `<body><form><input type="email"><article><h1>Guide</h1>${prose('Inside', 8)}</article></form></body>`,
    );
    assert.match(page, /Inside sentence number 7/);
  });

  test('a listing keeps its items and drops its filter panel', () => {
    const items = Array.from(
      { length: 8 },
      (_, i) =>
        `<li><a href="/p/${i}">Walking boot model ${i}</a><p>A waterproof leather boot with a grippy sole, size ${i}.</p><span>$${90 + i}</span></li>`,
    ).join('');
    const filters = `<div class="search-filters"><h3>Brand</h3><ul><li>Alpha (12)</li><li>Beta (7)</li></ul><h3>Size</h3><ul><li>Small</li><li>Large</li></ul></div>`;
    const t = main(`<body><main><h1>Boots</h1>${filters}<ul class="grid">${items}</ul></main></body>`);
    assert.match(t, /Walking boot model 0[\s\S]*Walking boot model 7/);
    assert.doesNotMatch(t, /Alpha \(12\)|Brand/);
  });
});

describe('threads and page-builder classes', () => {
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));

  test('a page that declares a thread keeps its replies after a long opening post', () => {
    const replies = Array.from(
      { length: 12 },
      (_, i) => `<div class="comment">${prose(`Reply${i + 1}`, 6)}</div>`,
    ).join('');
    const body = `<main><h1>Is consulting worth it?</h1><div class="first">${prose('Opening', 24)}</div><div class="comments">${replies}</div></main>`;
    const ld = '<script type="application/ld+json">{"@type":"QAPage"}</script>';
    assert.match(
      main(`<html><head>${ld}</head><body>${body}</body></html>`),
      /Opening sentence number 23[\s\S]*Reply12/,
    );
    // Undeclared, a long article keeps its comments out.
    assert.doesNotMatch(main(`<html><body>${body}</body></html>`), /Reply1/);
  });

  test('"adv" in a class is "advanced" (page builders), not an ad', () => {
    const t = main(
      `<body><main><h1>Repairs</h1><p class="kt-adv-heading">${'We repair treadmills, bikes and rowers at your gym. '.repeat(6)}</p></main></body>`,
    );
    assert.match(t, /We repair treadmills/);
  });
});

describe('boilerplate classes nest', () => {
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
  // A page builder: every block is a "widget" (wrapper > widget > widget-container), the article too.
  const block = (inner: string) =>
    `<div class="pb-widget-wrap"><div class="pb-widget"><div class="pb-widget-container">${inner}</div></div></div>`;

  test('an article built of nested widget blocks keeps every section, and a sidebar widget still goes', () => {
    const sections = [1, 2, 3, 4, 5]
      .map((i) =>
        block(`<h2>Tip ${i}</h2><p>${`Advice number ${i} is worth following for your budget. `.repeat(4)}</p>`),
      )
      .join('');
    const html = `<body><header><nav><a href="/">Home</a> <a href="/blog">Blog</a> <a href="/about">About</a></nav></header>
      <div class="row"><div class="col-main">${block(`<h1>Money tips</h1>${sections}`)}</div>
      <div class="col-side">${block('<h3>Follow us</h3><p>Social links and a newsletter box.</p>')}</div></div>
      <footer>Copyright</footer></body>`;
    const t = main(html);
    assert.match(t, /^Money tips\nTip 1[\s\S]*Advice number 5/);
    assert.doesNotMatch(t, /Follow us|Social links|Copyright/);
  });
});

describe('links in running text', () => {
  test('a link wrapping a span keeps its words in the sentence', () => {
    const html = `<body><article><h1>Events</h1><p><span>According to </span><a href="https://stats.example/"><span>limelight</span></a><span>, 85% of customers buy after a live event.</span></p>${prose('More', 6)}</article></body>`;
    const t = blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
    assert.match(t, /According to limelight, 85% of customers/);
  });
});

describe('what removed chrome leaves behind', () => {
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));

  test('a heading left with nothing under it at the end goes; a linked card title does not', () => {
    const rail = `<div class="related-posts"><a href="/a">First</a> <a href="/b">Second</a> <a href="/c">Third</a></div>`;
    const t = main(
      `<body><article><h1>Soil</h1>${prose('Soil', 8)}<h2>Related articles</h2>${rail}<h2>Trending</h2><h3>Newsletter</h3></article></body>`,
    );
    assert.match(t, /Soil sentence number 7/);
    assert.doesNotMatch(t, /Related articles|First|Trending|Newsletter/);
    // A grid's last tile is its linked title: it stays.
    const tiles = [1, 2, 3, 4]
      .map((i) => `<li><img src="/t${i}.jpg" alt=""><h2><a href="/c${i}">Category ${i} (12)</a></h2></li>`)
      .join('');
    assert.match(
      main(`<body><main><h1>Shop</h1>${prose('Intro', 2)}<ul>${tiles}</ul></main></body>`),
      /Category 4 \(12\)$/,
    );
    // The page title stays even when it is all there is after the boilerplate.
    assert.equal(main(`<body><main><h1>Only a title</h1></main></body>`), 'Only a title');
  });

  test('the labels of radio buttons are choices, not content; a checkbox list is left alone', () => {
    const colours = ['Venom', 'Navy', 'Sand']
      .map((c, i) => `<div class="opt"><input type="radio" name="c" id="c${i}"><label for="c${i}">${c}</label></div>`)
      .join('');
    const t = main(
      `<body><main><h1>Tumbler</h1><p>$35.00</p><div class="variants">${colours}</div>${prose('Steel', 6)}</main></body>`,
    );
    assert.match(t, /\$35\.00[\s\S]*Steel sentence number 5/);
    assert.doesNotMatch(t, /Venom|Navy|Sand/);
    // Checkboxes pick any number of things: a table of selectable areas is the page's content.
    const areas = ['Artificial intelligence', 'Computer vision', 'Databases']
      .map((a, i) => `<tr><td><input type="checkbox" id="a${i}"><label for="a${i}">${a}</label></td></tr>`)
      .join('');
    const u = main(`<body><main><h1>Rankings</h1>${prose('Ranked', 6)}<table>${areas}</table></main></body>`);
    assert.match(u, /Artificial intelligence[\s\S]*Databases/);
  });
});

describe('an article with a long comment section', () => {
  const comment = (i: number) =>
    `<li class="comment"><p>Reader ${i} says: ${'Lovely project, I will try it this weekend with my kids. '.repeat(3)}</p></li>`;
  const page = (head: string) =>
    `<html><head>${head}</head><body><main><h1>Ten wood projects</h1><div class="entry">${prose('Project', 8)}</div>` +
    `<div class="comments"><ol>${Array.from({ length: 30 }, (_, i) => comment(i)).join('')}</ol></div></main></body></html>`;
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));

  test('a page that says it is an article keeps its comments out once it opens with real text', () => {
    const t = main(page('<meta property="og:type" content="article">'));
    assert.match(t, /Project sentence number 7/);
    assert.doesNotMatch(t, /Reader 3 says/);
    // Undeclared, a short opener above many comments reads as a thread (a forum's first post).
    assert.match(main(page('')), /Project sentence number 7[\s\S]*Reader 29 says/);
  });
});

describe('BEM modifiers', () => {
  test('a modifier says how a block looks or what it holds, not what it is', () => {
    const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
    // Drupal: a node promoted to the front page is the article, beside a block of other prose.
    const drupal = `<body><div class="layout"><div class="node node--type-article node--promoted"><h1>Oral health</h1>${prose('Teeth', 8)}</div>
      <div class="region">${prose('Clinic', 1)}</div></div></body>`;
    assert.match(main(drupal), /^Oral health\nTeeth sentence number 0/);
    assert.doesNotMatch(main(drupal), /Clinic/);
    // A feed in a section "with more ads" is no ad.
    const cards = Array.from(
      { length: 8 },
      (_, i) =>
        `<article class="card"><h2><a href="/news/${i}">Headline number ${i} about the economy</a></h2><p>Summary ${i} of the story in a sentence.</p></article>`,
    ).join('');
    const feed = `<body><main><h1>Economy</h1></main><div class="container container--section-more-ads"><section class="feed">${cards}</section></div>
      <div class="region">${prose('Other', 8)}</div></body>`;
    assert.match(main(feed), /Headline number 0[\s\S]*Headline number 7/);
    // The block itself still counts: an ad container with a modifier is an ad.
    assert.doesNotMatch(
      main(`<body><main><h1>Economy</h1>${prose('Story', 6)}<div class="ad-slot--wide">Buy now</div></main></body>`),
      /Buy now/,
    );
  });
});

describe('state classes', () => {
  test('"hide-…", "no-…", "has-…" say what an element shows or has, not what it is', () => {
    const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
    const cards = Array.from(
      { length: 6 },
      (_, i) =>
        `<div class="summary-item"><h3><a href="/story/${i}">Story number ${i} about science</a></h3><p>Blurb ${i} of the story in one sentence.</p></div>`,
    ).join('');
    const page = `<body><main><h1>Science</h1><div class="grid-items hide-read-more-ad">${cards}</div></main>
      <div class="region">${prose('Other', 8)}</div></body>`;
    assert.match(main(page), /Story number 0[\s\S]*Story number 5/);
  });
});

describe('a category page with an editorial text', () => {
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
  const tiles = (n: number) =>
    Array.from(
      { length: n },
      (_, i) =>
        `<li class="grid-tile"><a class="product-tile" href="/p/${i}"><div class="name">Offspring earrings ${i}</div><div>Sterling silver</div><div>$${400 + i}.00</div></a></li>`,
    ).join('');
  // The tiles sit in wrappers under a small header ("48 results"); the page's one <article> is a text below them.
  const products = (n: number) =>
    `<div class="products"><div class="header"><span>${n} results</span></div><div class="results"><div class="wrap"><ul class="tiles">${tiles(n)}</ul></div></div></div>`;

  test('the article is the blurb of a listing, not the page: the tiles stay', () => {
    const page = `<body><div class="top"><h1>Silver earrings</h1></div><div id="main"><div class="category-list">${products(48)}
      <section class="article"><article><h2>A world of silver</h2>${prose('Silver', 11)}</article></section></div></div></body>`;
    const t = main(page);
    assert.match(t, /Offspring earrings 0[\s\S]*Offspring earrings 47/);
    assert.match(t, /Silver sentence number 10/);
  });

  test('a grid of tiles under a header, wrapped, beside long prose, is kept as the items', () => {
    const page = `<body><main><h1>Silver earrings</h1>${prose('Guide', 20)}${products(12)}</main></body>`;
    const t = main(page);
    assert.match(t, /Guide sentence number 19/);
    assert.match(t, /Offspring earrings 0[\s\S]*\$411\.00/);
  });
});

describe('permalink anchors', () => {
  test("a heading's link to itself (¶, #, a zero-width mark, its own fragment) goes; a real link in a heading stays", () => {
    const url = 'https://docs.example/en/ref/middleware/';
    const md = (html: string) =>
      domToMarkdown(cleanDocument(parseDocument(html), { onlyMainContent: true, url }), { baseUrl: url });
    const page = `<body><main><h1>Middleware<a class="headerlink" href="#middleware" title="Link to this heading">¶</a></h1>${prose('Intro', 4)}
      <h2>Cache<a href="https://docs.example/en/ref/middleware/#cache">\u200b</a></h2>${prose('Cache', 4)}
      <h2>Gzip<a href="#gzip">#gzip</a></h2>${prose('Gzip', 4)}
      <dl><dt><code>CacheMiddleware</code><a href="#cm">¶</a></dt><dd>${prose('Class', 2)}</dd></dl>
      <h2>See <a href="#sessions">Sessions</a> and <a href="/en/ref/other/#x">§ 4</a></h2>${prose('See', 4)}</main></body>`;
    const out = md(page);
    assert.match(out, /^# Middleware\n/m);
    assert.match(out, /^## Cache\n/m);
    assert.match(out, /^## Gzip\n/m);
    assert.doesNotMatch(out, /¶|#gzip\]/);
    // Links with words, and links to another page, are the heading's text.
    assert.match(out, /^## See \[Sessions\]\(https:\/\/docs\.example\/en\/ref\/middleware\/#sessions\) and \[§ 4\]/m);
  });
});

describe('a container with hardly any prose', () => {
  test("a chapter's table of contents, most of its text, is its content whatever its class", () => {
    const entries = Array.from(
      { length: 12 },
      (_, i) => `<dt><a href="/docs/indexes-${i}.html">11.${i}. Index type number ${i}</a></dt>`,
    ).join('');
    const page = `<body><nav><a href="/">Home</a> <a href="/docs">Docs</a></nav><div class="chapter"><h1>Chapter 11. Indexes</h1>
      <div class="toc"><p><b>Table of Contents</b></p><dl class="toc">${entries}</dl></div>
      <p>Indexes are a common way to enhance database performance.</p></div><footer>Copyright</footer></body>`;
    const t = blockText(cleanDocument(parseDocument(page), { onlyMainContent: true }));
    assert.match(t, /Index type number 0[\s\S]*Index type number 11/);
    assert.match(t, /enhance database performance/);
    assert.doesNotMatch(t, /Copyright/);
  });
});

describe('lists of links', () => {
  const main = (html: string) =>
    blockText(cleanDocument(parseDocument(html), { onlyMainContent: true, url: 'https://health.example/stress' }));
  test('a list whose every link goes to another site is a reading list (content); one linking this site is navigation', () => {
    const studies = ['Stress levels', 'Mood', 'Memory and focus']
      .map((s, i) => `<li><a href="https://pubmed.example/${i}">${s}</a></li>`)
      .join('');
    const nav = ['Stress', 'Sleep', 'Diet']
      .map((s) => `<li><a href="https://health.example/${s.toLowerCase()}">${s} guides</a></li>`)
      .join('');
    const t = main(
      `<body><article><h1>Breathing</h1>${prose('Breath', 6)}<p>Studies show it helps:</p><ul>${studies}</ul>${prose('More', 4)}<ul>${nav}</ul></article></body>`,
    );
    assert.match(t, /Stress levels\nMood\nMemory and focus/);
    assert.doesNotMatch(t, /Sleep guides/);
  });
});

describe('image carousels', () => {
  const md = (html: string) =>
    domToMarkdown(cleanDocument(parseDocument(html), { onlyMainContent: true }), { baseUrl: 'https://shop.example/' });
  test("a tile's photo carousel (every slide one picture linking the same page) keeps its first picture", () => {
    const slides = (i: number) =>
      Array.from(
        { length: 5 },
        (_, k) => `<li><div><img src="/img/${i}-${k}.jpg" alt="Stove ${i} photo ${k}"></div></li>`,
      ).join('');
    const tiles = [1, 2, 3, 4]
      .map(
        (i) =>
          `<li class="tile"><a href="/product/${i}"><ul class="carousel">${slides(i)}</ul></a><a href="/product/${i}">Camp stove ${i}</a><span>$${100 + i}</span></li>`,
      )
      .join('');
    const out = md(`<body><main><h1>Stoves</h1><ul class="grid">${tiles}</ul></main></body>`);
    assert.match(out, /Stove 1 photo 0/);
    assert.doesNotMatch(out, /photo [1-4]/);
    assert.match(out, /Camp stove 4[\s\S]*\$104/);
    // An article's gallery (pictures linking nothing, or each its own page) keeps every picture.
    const gallery = [0, 1, 2, 3].map((k) => `<figure><img src="/g/${k}.jpg" alt="Garden view ${k}"></figure>`).join('');
    const linked = [0, 1, 2, 3]
      .map((k) => `<li><a href="/photos/${k}"><img src="/p/${k}.jpg" alt="Photo page ${k}"></a></li>`)
      .join('');
    const article = md(
      `<body><article><h1>Garden</h1>${prose('Garden', 6)}<div>${gallery}</div><ul>${linked}</ul></article></body>`,
    );
    assert.match(article, /Garden view 0[\s\S]*Garden view 3/);
    assert.match(article, /Photo page 0[\s\S]*Photo page 3/);
  });
});

describe('sign-up boxes without a form', () => {
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
  test('a short block around an email field goes; a product card or a hero with the title keeps its field', () => {
    const box = `<div class="cta"><h3>Get more travel content</h3><p>Subscribe to our free daily newsletter.</p><input type="email" placeholder="Email"><span>Sign up</span></div>`;
    const t = main(`<body><main><h1>Car rentals</h1>${prose('Rental', 6)}${box}${prose('More', 4)}</main></body>`);
    assert.match(t, /Rental sentence number 5[\s\S]*More sentence number 3/);
    assert.doesNotMatch(t, /travel content|daily newsletter/);
    // A product card's "notify me" field and a hero's "enter your work email" are parts of content.
    const card = (i: number) =>
      `<li><h3>Feeder ${i}</h3><p>A bird feeder with a camera, model ${i}.</p><p>Notify me when it is back</p><input type="email"></li>`;
    const shop = main(`<body><main><h1>Shop</h1><ul>${[1, 2, 3, 4].map(card).join('')}</ul></main></body>`);
    assert.match(shop, /Feeder 1[\s\S]*Feeder 4/);
    const hero = main(
      `<body><main><div class="hero"><h1>Customer service, solved</h1><p>Resolve requests from day one.</p><input type="email" placeholder="Work email"></div>${prose('Feature', 6)}</main></body>`,
    );
    assert.match(hero, /^Customer service, solved\nResolve requests from day one/);
  });
});

describe('disclaimers', () => {
  test('an affiliate or legal disclaimer classed as one goes; a long section so classed is prose and stays', () => {
    const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
    const t = main(
      `<body><article><h1>Best laptops</h1><p class="disclaimer">Products are chosen independently by our editors.</p>${prose('Laptop', 6)}<div class="affiliate-note"><em>As an associate we earn from qualifying purchases.</em></div></article></body>`,
    );
    assert.match(t, /Laptop sentence number 5/);
    assert.doesNotMatch(t, /chosen independently|qualifying purchases/);
    const terms = main(
      `<body><main><h1>Terms</h1><div class="disclaimer">${prose('Liability', 8)}</div></main></body>`,
    );
    assert.match(terms, /Liability sentence number 7/);
  });
});

describe('links styled as buttons', () => {
  test('a call-to-action button link goes; one inside a sentence stays', () => {
    const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
    const t = main(
      `<body><article><h1>Solar panels</h1>${prose('Panel', 6)}<div><p>Ready to switch to solar power this year?</p><a class="btn btn-primary" href="/quote">Get a free quote</a></div><div><p>Want to see how the monitoring app works?</p><a role="button" href="/demo">Book a demo</a></div>` +
        `<p>You can <a class="button" href="/guide.pdf">download the guide</a> and read it offline later, at your own pace.</p></article></body>`,
    );
    assert.match(t, /Panel sentence number 5/);
    assert.doesNotMatch(t, /free quote|Book a demo/);
    assert.match(t, /You can download the guide and read it offline/);
  });
});

describe("what the page's own stylesheet hides", () => {
  const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
  const sheet = `<style>
    .x9{display:none} .wrap .q2{display:none !important}
    .k7{height:1px;left:-2000px;overflow:hidden;position:absolute;top:auto;width:1px}
    .tab{display:none} .tab.active{display:block}
    .hidden{display:none} @media (min-width:1024px){.lg\\:block{display:block}} @media (max-width:600px){.wide{display:none}}
    .faq-answer{display:none}
  </style><style media="print">.screen-only{display:none}</style>`;

  test('decoy letters (display:none, or moved off screen) go; a label reads as a reader sees it', () => {
    const label = `<p class="label">${[...'Sponsored'].map((c, i) => `<span>${c}</span><span class="${i % 2 ? 'x9' : 'k7'}">decoy${i}-3f9a</span>`).join('')}</p>`;
    const t = main(
      `<html><head>${sheet}</head><body><article><h1>Kettle</h1>${prose('Body', 6)}${label}</article></body></html>`,
    );
    assert.match(t, /Body sentence number 5/);
    assert.doesNotMatch(t, /decoy/);
    assert.match(t, /S\s*p\s*o\s*n\s*s\s*o\s*r\s*e\s*d/);
  });

  test('a selector of classes applies where its ancestors match; a shown, responsive or print-only class stays', () => {
    const t = main(
      `<html><head>${sheet}</head><body><article><h1>Kettle</h1>${prose('Body', 6)}` +
        `<div class="wrap"><p><span class="q2">inside wrap</span> after</p></div><p><span class="q2">outside wrap</span></p>` +
        `<p class="tab">a tab shown when active</p><p class="hidden lg:block">shown on a desktop screen</p>` +
        `<p class="wide">hidden on a phone only</p><p class="screen-only">hidden when printed</p></article></body></html>`,
    );
    assert.doesNotMatch(t, /inside wrap/);
    for (const kept of [
      'outside wrap',
      'a tab shown',
      'shown on a desktop',
      'hidden on a phone',
      'hidden when printed',
    ])
      assert.match(t, new RegExp(kept), kept);
  });

  test("a collapsed answer (prose the stylesheet hides until opened) stays: it is the page's content", () => {
    const faq = [1, 2, 3]
      .map(
        (i) =>
          `<div class="faq"><h3>Question ${i}?</h3><div class="faq-answer"><p>Answer ${i}: the kettle boils a litre of water in about three minutes.</p></div></div>`,
      )
      .join('');
    const t = main(
      `<html><head>${sheet}</head><body><article><h1>Kettle</h1>${prose('Body', 4)}${faq}</article></body></html>`,
    );
    assert.match(t, /Answer 1: the kettle[\s\S]*Answer 3/);
  });
});

describe("a select's options", () => {
  test('are not text the page shows: a lead form with a long country list still goes', () => {
    const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
    const options = Array.from({ length: 120 }, (_, i) => `<option value="c${i}">Country number ${i}</option>`).join(
      '',
    );
    const form = `<form><label>Work email</label><input type="email"><label>Country</label><select>${options}</select><textarea>Tell us about your fleet, your drivers and the vehicles you rent out every week.</textarea></form>`;
    const t = main(`<body><main><h1>Rental guide</h1>${prose('Guide', 3)}${form}</main></body>`);
    assert.match(t, /Guide sentence number 2/);
    assert.doesNotMatch(t, /Work email|Country/);
  });
});

describe('tiles of a grid', () => {
  test('a tile that is mostly its link stays when its grid, with prices and blurbs, is not link-dense', () => {
    const main = (html: string) => blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
    const tile = (i: number) =>
      i % 2
        ? `<div class="thumb"><a href="/pot-${i}">Gray cathedral pot and saucer, ${i} inches wide</a><span>$3${i}</span></div>`
        : `<div class="thumb"><a href="/pot-${i}">Pot ${i}</a><p>On sale this week: a glazed terracotta pot with its saucer.</p></div>`;
    const grid = `<div class="grid">${Array.from({ length: 8 }, (_, i) => tile(i)).join('')}</div>`;
    const t = main(`<body><main><h1>Indoor pottery</h1>${prose('About', 6)}${grid}</main></body>`);
    assert.match(t, /About sentence number 5/);
    assert.match(t, /Gray cathedral pot and saucer, 1 inches[\s\S]*Pot 6[\s\S]*7 inches wide/);
  });
});

describe('product pages with little prose', () => {
  const main = (head: string, body: string) =>
    blockText(
      cleanDocument(parseDocument(`<html><head>${head}</head><body>${body}</body></html>`), {
        onlyMainContent: true,
        url: 'https://shop.example/p/1',
      }),
    );
  const product = '<script type="application/ld+json">{"@type":"Product","offers":{"@type":"Offer"}}</script>';
  // A card linked by a link laid over it (no text of its own), its title an unlinked heading.
  const card = (i: number) =>
    `<li><section><img src="/t${i}.jpg" alt=""><h3>Ladies blouse number ${i}, floral, size 10</h3><span>$${8 + i}.03</span><span>+ $23.51 delivery</span></section><a aria-label="Blouse ${i}" href="https://shop.example/itm/${100 + i}"></a></li>`;
  const carousel = (title: string) =>
    `<div><h2>${title}</h2><ul class="carousel__list">${[1, 2, 3, 4, 5, 6].map(card).join('')}</ul></div>`;
  const item = `<div><h1>Three-pack ladies top, black, white and green, size 6</h1><p>GBP 12.00</p><p>Condition: not specified</p><p>Delivery: varies</p><p>Returns: seller does not accept returns</p><p>Item location: Leeds, United Kingdom; ships to the United States</p></div>`;

  test('recommendation carousels go even when the product itself has under 500 characters of prose', () => {
    const t = main(
      product,
      `<main>${item}${carousel('Similar items')}${carousel('People who viewed this item also viewed')}</main>`,
    );
    assert.match(t, /Three-pack ladies top[\s\S]*Returns: seller/);
    assert.doesNotMatch(t, /Ladies blouse|Similar items|also viewed/);
  });

  test('a page declaring a list and many products is a collection: its tiles are the content', () => {
    const list =
      '<script type="application/ld+json">{"@type":"ItemList","itemListElement":[' +
      [1, 2, 3, 4]
        .map((i) => `{"@type":"ListItem","item":{"@type":"Product","name":"P${i}","offers":{"@type":"Offer"}}}`)
        .join(',') +
      ']}</script>';
    const t = main(list, `<main><h1>Blouses</h1>${prose('Blouses', 3)}${carousel('All blouses')}</main>`);
    assert.match(t, /Ladies blouse number 1[\s\S]*Ladies blouse number 6/);
  });
});

describe('what a page says its content is', () => {
  const main = (html: string) =>
    blockText(cleanDocument(parseDocument(html), { onlyMainContent: true, url: 'https://shop.example/c/mowers' }));

  test("a skip link's target is the content, whatever its id says (a collapsed answer inside it is content too)", () => {
    const html = `<body><a href="#site-skip-nav">Skip to Content</a>
      <header><nav>${Array.from({ length: 12 }, (_, i) => `<a href="/s${i}">Section ${i}</a>`).join(' ')}</nav></header>
      <div id="site-skip-nav"><main><h1>Summit fire pit</h1>${prose('Feature', 3)}
      <button aria-expanded="false">Description</button>
      <div style="overflow:hidden;display:none;height:0px">${prose('Description', 6)}</div></main></div></body>`;
    const t = main(html);
    assert.match(t, /Feature sentence number 2/);
    assert.match(t, /Description sentence number 5/);
  });

  test('a grid classed as a rail ("related-product") that is all the page has left is the content', () => {
    const tile = (i: number) =>
      `<div class="col items-listing"><a href="/p/kr${i}"><div class="box-sku"><h4>KR${i}</h4></div><img src="/kr${i}.png"><div class="title"><h3>Robotic lawn mower for ${i} acres</h3><span class="price">$ ${i},099.99</span></div></a></div>`;
    const html = `<body><header><nav>${Array.from({ length: 30 }, (_, i) => `<a href="/s${i}">Category ${i}</a>`).join(' ')}</nav></header>
      <h1>Robotic lawn mowers</h1><p>Filter: <a href="/c/mowers?open">Open</a> <a href="/c/mowers">All</a></p><section class="related-product"><div class="row"><div class="container"><div class="row"><div class="listing">
      ${[1, 2, 3, 4, 5, 6].map(tile).join('')}</div></div></div></div></section>
      <footer>${Array.from({ length: 20 }, (_, i) => `<a href="/f${i}">Footer link ${i}</a>`).join(' ')}</footer></body>`;
    const t = main(html);
    assert.match(t, /KR1[\s\S]*Robotic lawn mower for 1 acres[\s\S]*\$ 1,099\.99[\s\S]*Robotic lawn mower for 6 acres/);
    // A related rail beside real content still goes.
    const beside = html.replace('<h1>Robotic lawn mowers</h1>', `<h1>Robotic lawn mowers</h1>${prose('Mowers', 8)}`);
    const u = main(beside);
    assert.match(u, /Mowers sentence number 7/);
    assert.doesNotMatch(u, /Robotic lawn mower for 1 acres/);
  });
});
