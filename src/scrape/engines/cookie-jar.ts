// The HTTP engine's cookies within one fetch: what the target sets along a redirect chain (HTTP
// redirects and <meta refresh>) goes back on the following hops by the rules of RFC 6265 (and
// 6265bis where tough-cookie follows it): Domain matching with public suffixes refused
// (`Domain=co.uk`), Path scoping, Secure cookies only set and sent over https (a loopback or
// localhost target counts as plain http here), Expires/Max-Age (a past one deletes), the
// __Secure-/__Host- prefixes. A malformed or refused Set-Cookie is dropped, never an error. One jar
// per fetch: nothing is kept between fetches, so cookies never pass from one request (or team) to
// another. SameSite is not applied: every hop is the fetch's own top-level navigation.
import { CookieJar, MemoryCookieStore } from 'tough-cookie';

export class FetchCookieJar {
  readonly #jar = new CookieJar(new MemoryCookieStore(), {
    rejectPublicSuffixes: true,
    allowSpecialUseDomain: true, // host-only cookies of *.localhost, *.test, *.local hosts
    allowSecureOnLocal: false,
    enforceSecureOriginOnStorage: true,
    looseMode: false,
    prefixSecurity: 'silent',
  });

  /** Keeps the cookies of an answer from `from` (its Set-Cookie header, one line or several). */
  store(from: URL, setCookie: string | string[] | undefined): void {
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      try {
        this.#jar.setCookieSync(line, from.href, { ignoreError: true });
      } catch {
        // ignoreError covers parse and domain errors; whatever else a line trips on, it is dropped too
      }
    }
  }

  /** The Cookie header value for a request to `to` (`name=value; …`), '' when none goes there. */
  header(to: URL): string {
    return this.#jar.getCookieStringSync(to.href);
  }
}
