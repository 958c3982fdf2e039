// Whether an HTML answer of the HTTP engine is the real page or a shell that only a browser fills:
// little visible text beside scripts, an empty SPA mount point, or a <noscript> wall. Cheap
// regular expressions on the decoded text; the browser costs ~100× more, so false positives
// matter more than a missed case (which the caller can force with waitFor or actions).
const MIN_TEXT = 200;

const NOSCRIPT = /<noscript\b[^>]*>([\s\S]*?)<\/noscript>/gi;
const NOSCRIPT_WALL = /enable\s+javascript|javascript\s+(is\s+)?(required|disabled)|requires\s+javascript/i;
const BODY_START = /<body\b[^>]*>/i;
// From the body on, one token at a time: an element whose content is never visible (skipped
// whole), a tag or comment, an entity, or a run of text (2: its characters; a `<` or `&` that
// starts neither a tag nor an entity is text, as a browser reads it).
const TOKEN = /<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1\s*>|<[a-z/!?][^>]*>|&[a-z#0-9]+;|([^<&]+|[<&])/giy;

export function needsRendering(html: string): boolean {
  if (!/<script\b/i.test(html)) return false;
  for (const m of html.matchAll(NOSCRIPT)) if (NOSCRIPT_WALL.test(m[1])) return true;
  return visibleTextLength(html) < MIN_TEXT;
}

/**
 * The length of the body's visible text with whitespace runs collapsed, counted only up to
 * MIN_TEXT: a real page reaches it within its first kilobytes, so the rest is never scanned.
 */
function visibleTextLength(html: string): number {
  const start = BODY_START.exec(html);
  TOKEN.lastIndex = start ? start.index + start[0].length : 0;
  let n = 0;
  // Tags and entities separate words: each counts as one space, as does a whitespace run.
  let gap = false;
  for (let m = TOKEN.exec(html); m && n < MIN_TEXT; m = TOKEN.exec(html)) {
    const text = m[2];
    if (text === undefined) {
      if (/^<\/body/i.test(m[0])) break;
      gap = true;
      continue;
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 32 || (c >= 9 && c <= 13) || c === 160) gap = true;
      else {
        // A space between two words (never before the first).
        if (gap && n > 0) n++;
        gap = false;
        n++;
      }
    }
  }
  return n;
}
