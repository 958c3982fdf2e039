// A deterministic corpus of realistic HTML pages for the markdown benchmark: news articles with
// boilerplate, docs pages with code and tables, forum threads, product pages, long blog posts and
// wiki-like pages dense with links and tables. Same seed → same bytes; sizes spread over 50–500 KB.

import { prng } from '../../test/fixtures/site/prose.ts';

export interface CorpusPage {
  name: string;
  html: string;
}

const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they you were ' +
  'her she there been one all we their has would when if so no will can more other its about into them than some could ' +
  'time these two may then do first any my now such like our over man me even most made after also did many before must ' +
  'through back years where much your way well down should because each just those people how too little state good very ' +
  'make world still own see men work long get here between both life being under never day same another know while last ' +
  'might us great old year off come since against go came right used take three server request cache latency deploy ' +
  'configuration parser markdown pipeline throughput benchmark release feature version module function library network'
).split(' ');

class Gen {
  private readonly r: () => number;
  constructor(seed: number) {
    this.r = prng(seed);
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)];
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  words(n: number): string {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.pick(WORDS));
    return out.join(' ');
  }
  sentence(): string {
    const s = this.words(this.int(6, 18));
    return s[0].toUpperCase() + s.slice(1) + this.pick(['.', '.', '.', '?', '!', '.']);
  }
  /** A paragraph's inner HTML with inline markup, links, entities and the odd special character. */
  inline(sentences: number): string {
    const parts: string[] = [];
    for (let i = 0; i < sentences; i++) {
      let s = this.sentence();
      const roll = this.r();
      if (roll < 0.15) s = s.replace(/ (\w+) /, ' <strong>$1</strong> ');
      else if (roll < 0.25) s = s.replace(/ (\w+) /, ' <em>$1</em> ');
      else if (roll < 0.45)
        s = s.replace(/ (\w+ \w+) /, ` <a href="/${this.pick(WORDS)}/${this.int(1, 999)}" class="link">$1</a> `);
      else if (roll < 0.52) s = s.replace(/ (\w+) /, ' <code>$1_v' + this.int(1, 9) + '</code> ');
      else if (roll < 0.56) s = s.replace(/ (\w+) /, ' $1&nbsp;&amp;&nbsp;co ');
      else if (roll < 0.6) s = s.replace(/ (\w+) /, ' <span class="hl">$1</span> ');
      else if (roll < 0.62)
        s += ' (see <a href="https://other.example.org/ref?id=' + this.int(1, 99999) + '&amp;x=1">ref</a>)';
      else if (roll < 0.64) s += ' 2 * 3 = 6, snake_case_name, [note]';
      parts.push(s);
    }
    return parts.join(' ');
  }
  paragraph(): string {
    return `<p class="para">${this.inline(this.int(2, 6))}</p>\n`;
  }
  list(depth = 0): string {
    const tag = this.chance(0.3) ? 'ol' : 'ul';
    let s = `<${tag}>\n`;
    const n = this.int(2, 7);
    for (let i = 0; i < n; i++) {
      s += `  <li>${this.inline(1)}`;
      if (depth < 2 && this.chance(0.2)) s += this.list(depth + 1);
      s += '</li>\n';
    }
    return s + `</${tag}>\n`;
  }
  table(rows: number, cols: number): string {
    let s = '<table class="data">\n<thead><tr>';
    for (let c = 0; c < cols; c++) s += `<th>${this.words(this.int(1, 3))}</th>`;
    s += '</tr></thead>\n<tbody>\n';
    for (let r = 0; r < rows; r++) {
      s += '<tr>';
      for (let c = 0; c < cols; c++) {
        const roll = this.r();
        if (roll < 0.1) s += `<td><a href="/item/${this.int(1, 9999)}">${this.words(2)}</a></td>`;
        else if (roll < 0.2) s += `<td align="right">${this.int(0, 100000).toLocaleString('en-US')}</td>`;
        else if (roll < 0.23 && c < cols - 1) {
          s += `<td colspan="2">${this.words(3)}</td>`;
          c++;
        } else s += `<td>${this.words(this.int(1, 5))}</td>`;
      }
      s += '</tr>\n';
    }
    return s + '</tbody></table>\n';
  }
  code(): string {
    const lang = this.pick(['js', 'typescript', 'python', 'bash', 'json']);
    let body = '';
    const n = this.int(5, 30);
    for (let i = 0; i < n; i++) {
      const indent = '  '.repeat(this.int(0, 3));
      body += `${indent}<span class="kw">const</span> <span class="id">${this.pick(WORDS)}</span> = <span class="fn">${this.pick(WORDS)}</span>(&quot;${this.words(2)}&quot;, ${this.int(0, 99)}); <span class="cm">// ${this.words(4)}</span>\n`;
      if (this.chance(0.1)) body += '\n';
    }
    return `<div class="highlight"><pre class="language-${lang}"><code>${body}</code></pre></div>\n`;
  }
  image(): string {
    const w = this.int(300, 1200);
    return `<img src="/img/${this.pick(WORDS)}-${this.int(1, 999)}.jpg" srcset="/img/a-${w}.jpg ${w}w, /img/a-${w * 2}.jpg ${w * 2}w" alt="${this.words(4)}" loading="lazy" width="${w}" height="${this.int(200, 800)}">`;
  }
}

const ICON =
  '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path d="M12 2L2 7l10 5 10-5-10-5zm0 9l2.5-1.25L12 8.5l-2.5 1.25L12 11z"/></svg>';

function boilerplateHead(g: Gen, title: string): string {
  let s = `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title>\n`;
  s +=
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n<link rel="stylesheet" href="/assets/site.css">\n';
  s += `<style>${'.c{color:#333;margin:0 auto;padding:4px 8px}'.repeat(g.int(20, 60))}</style>\n`;
  s += `<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}${'gtag("event","x",{a:1});'.repeat(g.int(10, 40))}</script>\n`;
  return s + '</head>\n<body class="page">\n';
}

function nav(g: Gen): string {
  let s = '<header class="site-header"><nav class="nav"><ul class="menu">';
  const n = g.int(8, 20);
  for (let i = 0; i < n; i++)
    s += `<li class="menu-item"><a href="/section/${g.pick(WORDS)}">${ICON}<span>${g.words(1)}</span></a></li>`;
  return (
    s +
    '</ul><form class="search"><input type="search" name="q" placeholder="Search"><button>Go</button></form></nav></header>\n'
  );
}

function footer(g: Gen): string {
  let s = '<footer class="site-footer"><div class="cols">';
  for (let c = 0; c < 4; c++) {
    s += `<div class="col"><h4>${g.words(2)}</h4><ul>`;
    for (let i = 0; i < 6; i++) s += `<li><a href="/f/${g.pick(WORDS)}">${g.words(2)}</a></li>`;
    s += '</ul></div>';
  }
  s += `</div><p class="copy">&copy; 2026 Example Media. All rights reserved.</p></footer>\n`;
  s += `<script src="/assets/app.js"></script><script>${'(function(){var a=1;})();'.repeat(g.int(20, 80))}</script>\n`;
  return s + '</body></html>\n';
}

function news(g: Gen, target: number): string {
  let s = boilerplateHead(g, 'News: ' + g.words(6)) + nav(g);
  s += `<main><article><h1>${g.sentence()}</h1><p class="byline">By <a href="/authors/x">${g.words(2)}</a> · <time>2026-11-22</time></p>\n`;
  s += `<figure>${g.image()}<figcaption>${g.sentence()}</figcaption></figure>\n`;
  while (s.length < target * 0.85) {
    s += g.paragraph();
    if (g.chance(0.1)) s += `<blockquote><p>${g.inline(2)}</p></blockquote>\n`;
    if (g.chance(0.08)) s += `<h2>${g.words(5)}</h2>\n`;
    if (g.chance(0.05)) s += `<aside class="ad" aria-hidden="true"><div class="ad-slot">Advertisement</div></aside>\n`;
    if (g.chance(0.06)) s += `<div class="related"><h3>Related</h3>${g.list()}</div>\n`;
  }
  return s + '</article></main>\n' + footer(g);
}

function docs(g: Gen, target: number): string {
  let s = boilerplateHead(g, 'Docs: ' + g.words(3)) + nav(g);
  s += '<div class="layout"><aside class="sidebar"><ul>';
  for (let i = 0; i < 40; i++) s += `<li><a href="/docs/${g.pick(WORDS)}">${g.words(2)}</a></li>`;
  s += `</ul></aside><main class="content"><h1>${g.words(4)}</h1>\n`;
  while (s.length < target * 0.9) {
    s += `<h2 id="${g.pick(WORDS)}">${g.words(3)}<a class="anchor" href="#x">#</a></h2>\n`;
    s += g.paragraph();
    s += g.code();
    if (g.chance(0.5)) s += g.table(g.int(4, 15), g.int(3, 5));
    if (g.chance(0.4)) s += g.list();
    if (g.chance(0.2)) s += `<div class="note"><p><strong>Note:</strong> ${g.inline(2)}</p></div>\n`;
  }
  return s + '</main></div>\n' + footer(g);
}

function forum(g: Gen, target: number): string {
  let s = boilerplateHead(g, 'Thread: ' + g.words(6)) + nav(g) + `<main><h1>${g.sentence()}</h1>\n`;
  let n = 0;
  while (s.length < target * 0.9) {
    n++;
    s += `<div class="post" id="p${n}"><div class="author"><img src="/avatars/${n}.png" alt=""><a href="/u/${g.pick(WORDS)}">${g.pick(WORDS)}${n}</a><span class="rank">Member</span></div>`;
    s += `<div class="body">`;
    if (n > 1 && g.chance(0.3))
      s += `<blockquote class="quote"><cite>${g.pick(WORDS)} wrote:</cite><p>${g.inline(1)}</p></blockquote>`;
    for (let i = g.int(1, 4); i > 0; i--) s += g.paragraph();
    if (g.chance(0.15)) s += `<pre><code>${g.words(8)}\n  ${g.words(5)}</code></pre>`;
    s += `</div><div class="actions"><button>Reply</button><button>Like</button><a href="/report/${n}">Report</a></div></div>\n`;
  }
  return s + '</main>\n' + footer(g);
}

function product(g: Gen, target: number): string {
  let s = boilerplateHead(g, 'Shop: ' + g.words(3)) + nav(g);
  s += `<main><div class="product"><div class="gallery">${g.image()}${g.image()}${g.image()}</div>`;
  s += `<h1>${g.words(4)}</h1><p class="price"><del>$${g.int(100, 200)}.00</del> <strong>$${g.int(50, 99)}.99</strong></p>`;
  s += `<select name="size"><option>S</option><option>M</option><option>L</option></select><button class="buy">Add to cart</button>`;
  s += `<h2>Specifications</h2>${g.table(g.int(8, 20), 2)}</div>\n<section class="reviews"><h2>Reviews</h2>\n`;
  while (s.length < target * 0.85) {
    s += `<div class="review"><span class="stars" aria-label="4 stars">★★★★☆</span><h3>${g.words(4)}</h3>${g.paragraph()}<p class="meta">${g.words(3)} · <a href="/helpful">Helpful</a></p></div>\n`;
    if (g.chance(0.1))
      s += `<div class="carousel"><ul>${Array.from({ length: 6 }, () => `<li><a href="/p/${g.int(1, 9999)}">${g.image()}<span>${g.words(3)}</span></a></li>`).join('')}</ul></div>`;
  }
  return s + '</section></main>\n' + footer(g);
}

function blog(g: Gen, target: number): string {
  let s = boilerplateHead(g, 'Blog: ' + g.words(5)) + nav(g) + `<main><article class="post"><h1>${g.sentence()}</h1>\n`;
  while (s.length < target * 0.9) {
    s += g.paragraph();
    const roll = g.int(0, 9999) / 10000;
    if (roll < 0.1) s += `<h2>${g.words(4)}</h2>\n`;
    else if (roll < 0.18) s += g.list();
    else if (roll < 0.24) s += g.code();
    else if (roll < 0.28) s += `<figure>${g.image()}<figcaption>${g.sentence()}</figcaption></figure>\n`;
    else if (roll < 0.31)
      s += `<ul class="tasks"><li><input type="checkbox" checked> ${g.words(3)}</li><li><input type="checkbox"> ${g.words(3)}</li></ul>\n`;
    else if (roll < 0.33) s += `<hr>\n`;
    else if (roll < 0.36) s += `<p>${g.words(5)}<br>${g.words(5)}<br>${g.words(4)}</p>\n`;
  }
  return s + '</article></main>\n' + footer(g);
}

function wiki(g: Gen, target: number): string {
  let s = boilerplateHead(g, 'Wiki: ' + g.words(2)) + nav(g) + `<main id="content"><h1>${g.words(3)}</h1>\n`;
  s += `<table class="infobox"><tr><th colspan="2">${g.words(2)}</th></tr>`;
  for (let i = 0; i < 12; i++)
    s += `<tr><th>${g.words(1)}</th><td><a href="/wiki/${g.pick(WORDS)}_(${g.pick(WORDS)})">${g.words(2)}</a></td></tr>`;
  s += '</table>\n<div class="toc"><ol>';
  for (let i = 1; i <= 12; i++) s += `<li><a href="#s${i}">${i} ${g.words(2)}</a></li>`;
  s += '</ol></div>\n';
  while (s.length < target * 0.9) {
    s += `<h2><span class="mw-headline" id="s">${g.words(3)}</span><span class="edit">[<a href="/edit">edit</a>]</span></h2>\n`;
    for (let i = g.int(2, 5); i > 0; i--) {
      let p = '<p>';
      for (let j = g.int(3, 8); j > 0; j--)
        p += `${g.words(g.int(3, 10))} <a href="/wiki/${g.pick(WORDS)}" title="${g.words(2)}">${g.words(g.int(1, 3))}</a>`;
      s += p + `<sup class="reference"><a href="#cite-${g.int(1, 300)}">[${g.int(1, 300)}]</a></sup>.</p>\n`;
    }
    if (g.chance(0.4)) s += g.table(g.int(5, 25), g.int(3, 7));
  }
  s += '<div class="navbox"><table><tr><td>';
  for (let i = 0; i < 200; i++) s += `<a href="/wiki/${g.pick(WORDS)}">${g.words(2)}</a> · `;
  return s + '</td></tr></table></div></main>\n' + footer(g);
}

const KINDS = [
  ['news', news],
  ['docs', docs],
  ['forum', forum],
  ['product', product],
  ['blog', blog],
  ['wiki', wiki],
] as const;

/** ~20 pages, sizes spread over 50–500 KB (geometric steps), the page kinds in rotation. */
export function generateCorpus(count = 20): CorpusPage[] {
  const pages: CorpusPage[] = [];
  for (let i = 0; i < count; i++) {
    // Generators stop at 85–90% of their target, before the footer: targets 58–530 KB.
    const target = Math.round(58_000 * Math.pow(530 / 58, i / (count - 1)));
    const [kind, make] = KINDS[i % KINDS.length];
    const g = new Gen(1000 + i);
    pages.push({ name: `${kind}-${String(i).padStart(2, '0')}`, html: make(g, target) });
  }
  return pages;
}
