// onlyCleanContent without a model: drops residual boilerplate blocks from markdown.
//
// The markdown is cut into blocks (paragraph lines, single list items, fenced code, tables,
// headings). Always kept: headings, fenced/indented code, tables, blocks holding an image, and
// prose blocks that merely contain links. Removed (each counts once in `removed`):
// - boilerplate phrases as a whole short block (≤ 15 words): "Share on …", "Share this",
//   "Follow us", "Subscribe…", "Sign up for our newsletter", "Skip to content", "Back to top",
//   "All rights reserved", "© …", "Tweet", "Print", "Read more" / "Continue reading" / "Load more"
//   (also as a lone link), "Previous/Next post", "Tags:" lines of links;
// - cookie notices: short blocks mentioning cookies together with use/accept/consent/policy;
// - breadcrumbs: ≥ 2 links joined by › » > / | → and at most 4 other words (the current page);
// - navigation-like blocks: ≥ 2 links whose link text is ≥ 70% of the block's text (a list of
//   ≥ 3 consecutive link-only items of ≤ 5 words each counts as one such block);
// - repeated short blocks (≤ 15 words): any later exact repeat of an earlier block.
// Blank-line runs are collapsed. Same input → same output.

export interface CleanResult {
  markdown: string;
  /** Blocks removed. */
  removed: number;
}

interface Block {
  lines: string[];
  kind: 'heading' | 'code' | 'table' | 'item' | 'para' | 'blank';
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+/;
const LINK = /!?\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)/g;

function blocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: Block[] = [];
  let cur: Block | undefined;
  const end = () => {
    if (cur) out.push(cur);
    cur = undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      end();
      const b: Block = { lines: [line], kind: 'code' };
      for (i++; i < lines.length; i++) {
        b.lines.push(lines[i]);
        if (lines[i].trimStart().startsWith(fence[1]) && lines[i].trim().replace(/[`~]/g, '') === '') break;
      }
      out.push(b);
      continue;
    }
    if (/^\s*$/.test(line)) {
      end();
      out.push({ lines: [line], kind: 'blank' });
      continue;
    }
    if (/^ {0,3}#{1,6}(\s|$)/.test(line)) {
      end();
      out.push({ lines: [line], kind: 'heading' });
      continue;
    }
    if (/^ {4,}|\t/.test(line) && (!cur || cur.kind === 'code')) {
      if (!cur) cur = { lines: [], kind: 'code' };
      cur.lines.push(line);
      continue;
    }
    if (/^\s*\|/.test(line) || (cur?.kind === 'table' && line.includes('|'))) {
      if (cur?.kind !== 'table') {
        end();
        cur = { lines: [], kind: 'table' };
      }
      cur.lines.push(line);
      continue;
    }
    if (LIST.test(line) && !/^ {2,}|\t/.test(line)) {
      end();
      cur = { lines: [line], kind: 'item' };
      continue;
    }
    if (!cur) cur = { lines: [], kind: 'para' };
    cur.lines.push(line);
  }
  end();
  return out;
}

function plain(text: string): { text: string; linkText: string; links: number; image: boolean } {
  let linkText = '';
  let links = 0;
  let image = false;
  const stripped = text.replace(LINK, (m, t: string) => {
    if (m.startsWith('!')) {
      image = true;
      return t;
    }
    links++;
    const inner = t.replace(/!\[([^\]]*)\]\([^)]*\)/g, () => {
      image = true;
      return '';
    });
    linkText += ` ${inner}`;
    return inner;
  });
  const clean = (s: string) =>
    s
      .replace(LIST, '')
      .replace(/[*_`>#]/g, '')
      .replace(/\s+/g, ' ')
      .trim();
  return {
    text: clean(stripped.replace(/^\s*(?:[-*+]|\d{1,9}[.)])\s+/gm, '')),
    linkText: clean(linkText),
    links,
    image,
  };
}

const PHRASES =
  /^(share (on|this|via|to)\b|share$|tweet( this)?$|pin it$|print( this)?( page| article)?$|follow us\b|subscribe\b|sign up for (our|the) newsletter|join our newsletter|skip to (main )?content|back to top|scroll to top|all rights reserved|©|\(c\) ?\d{4}|copyright ©|read more\b|continue reading\b|load more\b|show more$|see more$|(previous|next) (post|article|story)\b|tags?:|related (posts|articles|stories)$|advertisement$|sponsored$|was this (page |article )?helpful)/i;

function words(s: string): number {
  return s ? s.split(/\s+/).length : 0;
}

function isBoilerplate(b: Block, seen: Set<string>): boolean {
  const raw = b.lines.join('\n');
  const p = plain(raw);
  if (p.image) return false;
  const n = words(p.text);
  if (n === 0) return b.kind !== 'para' || p.links > 0;
  if (n <= 15 && PHRASES.test(p.text)) return true;
  if (n <= 40 && /\bcookies?\b/i.test(p.text) && /\b(use|accept|consent|policy|preferences|settings)\b/i.test(p.text))
    return true;
  // Breadcrumbs: links joined by separators and nothing else.
  if (p.links >= 2) {
    const rest = raw.replace(LINK, ' ');
    if (/[›»>/|→]/.test(rest.replace(/^\s*>/, '')) && words(rest.replace(/[\s›»>/|→·•\-–—*]+/g, ' ').trim()) <= 4)
      return true;
  }
  if (p.links >= 2 && p.linkText.length >= 0.7 * p.text.length) return true;
  if (n <= 15) {
    const key = p.text.toLowerCase();
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

function isLinkOnlyItem(b: Block): boolean {
  if (b.kind !== 'item' || b.lines.length !== 1) return false;
  const p = plain(b.lines[0]);
  return p.links === 1 && !p.image && p.linkText === p.text && words(p.text) <= 5;
}

export function cleanMarkdown(markdown: string): CleanResult {
  const bs = blocks(markdown);
  const drop = new Set<number>();
  // Runs of ≥ 3 link-only list items (blank lines allowed between them) are navigation.
  for (let i = 0; i < bs.length;) {
    if (!isLinkOnlyItem(bs[i])) {
      i++;
      continue;
    }
    const run: number[] = [];
    let j = i;
    while (
      j < bs.length &&
      (isLinkOnlyItem(bs[j]) || (bs[j].kind === 'blank' && j + 1 < bs.length && isLinkOnlyItem(bs[j + 1])))
    ) {
      if (bs[j].kind === 'item') run.push(j);
      j++;
    }
    if (run.length >= 3) for (const k of run) drop.add(k);
    i = j;
  }
  let removed = drop.size;
  const seen = new Set<string>();
  bs.forEach((b, i) => {
    if (drop.has(i) || b.kind === 'heading' || b.kind === 'code' || b.kind === 'table' || b.kind === 'blank') return;
    if (isBoilerplate(b, seen)) {
      drop.add(i);
      removed++;
    }
  });
  const kept: string[] = [];
  let lastBlank = true;
  bs.forEach((b, i) => {
    if (drop.has(i)) return;
    if (b.kind === 'blank') {
      if (lastBlank) return;
      lastBlank = true;
    } else lastBlank = false;
    kept.push(...b.lines);
  });
  const text = kept.join('\n');
  return { markdown: removed ? text.replace(/\n+$/, markdown.endsWith('\n') ? '\n' : '') : markdown, removed };
}
