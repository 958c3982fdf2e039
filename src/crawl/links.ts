// What a crawler needs from an HTML page, in one streaming pass (htmlparser2's tokenizer, no
// DOM): its title and description, and its outgoing links, absolute and normalised.
//
// - title: <title> (whitespace collapsed; svg/math titles ignored), else og:title, else the
//   first <h1>'s text, as src/scrape/transform/metadata.ts chooses.
// - description: <meta name="description">, else og:description.
// - links: <a href> and <area href>, in page order, each once, resolved against <base href>
//   when the page has one; non-http(s) and fragment-only links dropped (see url.ts).
// - nofollow: <meta name="robots"> contains nofollow or none (reported; callers decide).
import { Parser } from 'htmlparser2';
import { type NormalizeOptions, resolveLink } from '../net/url-key.ts';
import { asBrowserReads } from '../scrape/transform/browser-html.ts';

export interface PageLinks {
  title?: string;
  description?: string;
  /** Absolute http(s) links in the normal form of url.ts, in page order, each once. */
  links: string[];
  /** <link rel="canonical">, absolute, when given. */
  canonical?: string;
  /** The page's robots meta says nofollow (or none). */
  nofollow: boolean;
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Extracts title, description and links from an HTML document served at `pageUrl`. */
export function extractPageLinks(html: string, pageUrl: string, opts: NormalizeOptions = {}): PageLinks {
  let base = pageUrl;
  let titleText: string | undefined;
  let h1Text: string | undefined;
  let inH1 = false;
  let h1Buf = '';
  let foreign = 0; // depth inside svg/math, whose <title> is not the page's
  let inTitle = false;
  let titleBuf = '';
  const metas = new Map<string, string>();
  const hrefs: string[] = [];
  let canonical: string | undefined;
  let baseSeen = false;

  const parser = new Parser(
    {
      onopentag(name, a) {
        switch (name) {
          case 'svg':
          case 'math':
            foreign++;
            return;
          case 'title':
            if (!foreign && titleText === undefined) {
              inTitle = true;
              titleBuf = '';
            }
            return;
          case 'h1':
            if (h1Text === undefined) {
              inH1 = true;
              h1Buf = '';
            }
            return;
          case 'base':
            // Only the first <base href> counts, and only links after it would differ in a
            // streaming pass: it sits in <head>, before any link, in real pages.
            if (!baseSeen && a.href) {
              baseSeen = true;
              try {
                base = new URL(a.href.trim(), pageUrl).href;
              } catch {
                // unusable base: keep the page URL
              }
            }
            return;
          case 'meta': {
            const key = (a.name ?? a.property ?? '').trim().toLowerCase();
            if (key && a.content !== undefined && !metas.has(key)) metas.set(key, collapse(a.content));
            return;
          }
          case 'link':
            if (canonical === undefined && a.href && (a.rel ?? '').toLowerCase().split(/\s+/).includes('canonical'))
              canonical = a.href;
            return;
          case 'a':
          case 'area':
            if (a.href !== undefined) hrefs.push(a.href);
            return;
        }
      },
      ontext(t) {
        if (inTitle) titleBuf += t;
        if (inH1) h1Buf += t;
      },
      onclosetag(name) {
        if (name === 'svg' || name === 'math') foreign = Math.max(0, foreign - 1);
        else if (name === 'title' && inTitle) {
          inTitle = false;
          titleText = collapse(titleBuf);
        } else if (name === 'h1' && inH1) {
          inH1 = false;
          h1Text = collapse(h1Buf);
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(asBrowserReads(html));

  const title = titleText || metas.get('og:title') || h1Text || undefined;
  const description = metas.get('description') || metas.get('og:description') || undefined;
  const seen = new Set<string>();
  const links: string[] = [];
  for (const href of hrefs) {
    const url = resolveLink(href, base, opts);
    if (url && !seen.has(url)) {
      seen.add(url);
      links.push(url);
    }
  }
  const robots = metas.get('robots') ?? '';
  const out: PageLinks = { links, nofollow: /\b(nofollow|none)\b/i.test(robots) };
  if (title) out.title = title;
  if (description) out.description = description;
  const canon = canonical ? resolveLink(canonical, base) : undefined;
  if (canon) out.canonical = canon;
  return out;
}
