// strictConstrainToURLs: the pages an agent may read are the given URLs and the pages under them
// (same origin, www-insensitive; the path equal to a given one or below it, by whole segments).
import { hostOf } from '../search/filters.ts';

export class UrlScope {
  readonly #bases: { origin: string; path: string }[];

  constructor(urls: string[]) {
    this.#bases = urls.flatMap((u) => {
      const p = parse(u);
      return p ? [{ origin: p.origin, path: p.path }] : [];
    });
  }

  /** Whether `url` is one of the given URLs or under one. */
  allows(url: string): boolean {
    const p = parse(url);
    if (!p) return false;
    return this.#bases.some(
      (b) => b.origin === p.origin && (b.path === '' || p.path === b.path || p.path.startsWith(`${b.path}/`)),
    );
  }

  /** The hosts of the given URLs (a search's includeDomains). */
  hosts(): string[] {
    return [...new Set(this.#bases.map((b) => hostOf(b.origin)).filter((h): h is string => Boolean(h)))];
  }
}

function parse(u: string): { origin: string; path: string } | undefined {
  let url: URL;
  try {
    url = new URL(u);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const host = url.host.toLowerCase().replace(/^www\./, '');
  return { origin: `${url.protocol}//${host}`, path: url.pathname.replace(/\/+$/, '') };
}
