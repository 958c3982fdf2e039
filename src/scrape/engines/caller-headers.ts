// Which of a caller's headers go where. They are meant for the site the caller asked for: on a
// redirect to another host, or a browser page's request to another host, credentials stay
// behind (browsers drop Authorization on such a redirect, curl drops Authorization and Cookie
// when the host changes), and nothing goes from https down to plain http on the way. The rest
// (User-Agent, Accept-*, a custom X-Foo) still goes along: it describes the client, not an account.

/** Authorization, Cookie, and any header whose name says it carries a secret (X-Api-Key, X-Auth-Token…). */
const CREDENTIAL = /^(authorization|proxy-authorization|cookie)$|auth|token|secret|session|passw|api-?key|^x-.*-key$/i;

export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL.test(name);
}

/** Whether `url` is the caller's own target for headers: the same host name, and no downgrade from https. */
export function sameTarget(target: URL, url: URL): boolean {
  return (
    url.hostname.toLowerCase() === target.hostname.toLowerCase() &&
    !(target.protocol === 'https:' && url.protocol === 'http:')
  );
}

/** The caller's headers to send to `url` when the request was for `target`. */
export function callerHeadersFor(
  headers: Record<string, string> | undefined,
  target: URL,
  url: URL,
): Record<string, string> {
  if (!headers) return {};
  if (sameTarget(target, url)) return headers;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!isCredentialHeader(k)) out[k] = v;
  return out;
}
