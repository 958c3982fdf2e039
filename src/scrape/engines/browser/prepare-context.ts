// What a context needs before its first page, for a scrape's fetch and a browser session alike:
// the caller's cookies and init scripts, ad and tracker blocking with cookie-banner hiding, the
// languages' Accept-Language, and the caller's credentials kept to the host asked for.
import type { BrowserContext, Request } from 'playwright-core';
import type { AdBlocker } from './adblock.ts';
import { type Emulation, cookiesFromHeader } from './emulation.ts';
import { isCredentialHeader, sameTarget } from '../caller-headers.ts';

export interface PreparedContext {
  /** Ad and tracker requests aborted so far. */
  blockedAds(): number;
}

export async function prepareContext(
  context: BrowserContext,
  url: string,
  emu: Emulation,
  blocker: AdBlocker | undefined,
): Promise<PreparedContext> {
  let blockedAds = 0;
  if (emu.cookieHeader) await context.addCookies(cookiesFromHeader(emu.cookieHeader, url));
  for (const script of emu.initScripts) await context.addInitScript({ content: script });
  const css = blocker?.cosmeticCss(url);
  if (css) await context.addInitScript({ content: adoptStylesheet(css) });
  // The caller's credentials (src/scrape/engines/caller-headers.ts) go with every request the
  // context makes (extraHTTPHeaders); the page's requests to other hosts are stripped of them.
  // (A redirect of the page itself is not routed again: its next hop keeps them.)
  const target = new URL(url);
  const credentials = Object.keys(emu.options.extraHTTPHeaders ?? {}).filter(isCredentialHeader);
  if (blocker || emu.acceptLanguage || credentials.length) {
    const accept = emu.acceptLanguage;
    await context.route('**/*', (route, request) => {
      if (blocker?.shouldBlock(request.url(), requestType(request), sourceUrl(request))) {
        blockedAds++;
        return route.abort('blockedbyclient').catch(() => {});
      }
      let headers: Record<string, string> | undefined = accept
        ? { ...request.headers(), 'accept-language': accept }
        : undefined;
      if (credentials.length && !sameTarget(target, new URL(request.url()))) {
        headers ??= { ...request.headers() };
        for (const k of credentials) delete headers[k];
      }
      return route.continue(headers ? { headers } : undefined).catch(() => {});
    });
  }
  return { blockedAds: () => blockedAds };
}

function requestType(request: Request): Parameters<AdBlocker['shouldBlock']>[1] {
  const type = request.resourceType();
  if (type !== 'document') return type as Parameters<AdBlocker['shouldBlock']>[1];
  try {
    return request.frame().parentFrame() ? 'sub_frame' : 'document';
  } catch {
    return 'document';
  }
}

function sourceUrl(request: Request): string | undefined {
  try {
    const frame = request.frame();
    return request.isNavigationRequest() ? (frame.parentFrame()?.url() ?? frame.url()) : frame.url();
  } catch {
    return undefined;
  }
}

function adoptStylesheet(css: string): string {
  return (
    `(() => { try { const s = new CSSStyleSheet(); s.replaceSync(${JSON.stringify(css)}); ` +
    'document.adoptedStyleSheets = [...document.adoptedStyleSheets, s]; } catch {} })();'
  );
}
