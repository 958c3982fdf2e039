// Search engines' result pages wrap every result link in a redirect through themselves (Google's /url?q=, Bing's
// /ck/a?...&u=a1<base64>, DuckDuckGo's /l/?uddg=, Yahoo's /RU=<target>/RK=...): a saved or fetched result page
// keeps the real targets when the wrapper is taken off. Only these shapes on these engines' hosts (or relative, as
// a saved page has them) are unwrapped, and only to an absolute http(s) URL.

const HINTS = ['/url?', '/ck/a?', 'uddg=', '/RU='];

/** The result URL a search engine's redirect link points at, or the link unchanged. */
export function unwrapSearchRedirect(href: string): string {
  if (!HINTS.some((h) => href.includes(h))) return href;
  const relative = !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('//');
  const u = URL.parse(href, 'https://relative.invalid/');
  if (!u) return href;
  const host = relative ? '' : u.hostname.toLowerCase().replace(/^www\./, '');
  let target: string | null = null;
  if (u.pathname === '/url' && (relative || /^google\.[a-z.]+$/.test(host)))
    target = u.searchParams.get('q') ?? u.searchParams.get('url');
  else if (u.pathname === '/ck/a' && (relative || host === 'bing.com')) {
    const v = u.searchParams.get('u');
    if (v?.startsWith('a1')) target = Buffer.from(v.slice(2), 'base64url').toString('utf8');
  } else if (u.pathname === '/l/' && (relative || host === 'duckduckgo.com' || host === 'html.duckduckgo.com'))
    target = u.searchParams.get('uddg');
  else if (host.endsWith('search.yahoo.com') || (relative && u.pathname.includes('/RU='))) {
    const m = /\/RU=([^/]+)\/R[KS]=/.exec(u.pathname);
    if (m) target = safeDecode(m[1]);
  }
  return target && /^https?:\/\/[^\s]+$/i.test(target) && URL.canParse(target) ? target : href;
}

function safeDecode(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}
