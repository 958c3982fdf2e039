// Whether an HTML answer of the HTTP engine is the real page or a shell that only a browser fills:
// little visible text beside scripts, an empty SPA mount point, or a <noscript> wall. Cheap
// regular expressions on the decoded text; the browser costs ~100× more, so false positives
// matter more than a missed case (which the caller can force with waitFor or actions).
const MIN_TEXT = 200;

export function needsRendering(html: string): boolean {
  const hasScript = /<script\b/i.test(html);
  if (!hasScript) return false;
  const noscript = /<noscript\b[^>]*>([\s\S]*?)<\/noscript>/gi;
  for (const m of html.matchAll(noscript)) {
    if (/enable\s+javascript|javascript\s+(is\s+)?(required|disabled)|requires\s+javascript/i.test(m[1])) return true;
  }
  const body = /<body\b[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html;
  const text = body
    .replace(/<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&[a-z#0-9]+;/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length >= MIN_TEXT) return false;
  // Little text and scripts: an SPA shell (an empty #root/#app/#__next mount point is typical).
  return true;
}
