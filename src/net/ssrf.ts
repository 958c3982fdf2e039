// SSRF guard for outbound fetches of caller-chosen URLs.
//
// The authoritative check runs inside the socket connect path (a custom
// dns.lookup plus an IP-literal check in the connector), so it applies to every
// connection undici opens, including each redirect hop, and it judges exactly
// the addresses the socket then connects to (no check-then-resolve-again gap).
// assertUrlAllowed is a cheap early rejection for obviously bad URLs.
import { promises as dnsPromises } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { BlockedUrlError } from '../errors.ts';
import { classifyAddress } from './address-class.ts';
import type { AddressClass } from './address-class.ts';

export { classifyAddress };
export type { AddressClass };

export interface SsrfOptions {
  /** Allow private/loopback/link-local/etc. targets (GLEANER_ALLOW_PRIVATE_NETWORK=true). */
  allowPrivateNetwork: boolean;
  /**
   * Exception hook (intended for tests): consulted only for addresses the
   * policy would block; returning true lets that (ip, hostname) pair through.
   */
  isAllowed?: (ip: string, hostname: string) => boolean;
}

export type Resolver = (hostname: string, options: LookupOptions) => Promise<LookupAddress[]>;

export interface GuardedLookupOptions extends SsrfOptions {
  /** Defaults to the system resolver (dns.promises.lookup with all: true). */
  resolver?: Resolver;
}

export interface GuardedAgentOptions extends GuardedLookupOptions {
  /** TCP+TLS connect timeout in ms (default 10s). */
  connectTimeoutMs?: number;
  /** Verify TLS certificates (default true). */
  rejectUnauthorized?: boolean;
  /** Extra undici Agent options; `connect` is always ours. */
  agentOptions?: Omit<Agent.Options, 'connect'>;
}

export class BlockedAddressError extends Error {
  readonly code = 'SSRF_BLOCKED';
  readonly hostname: string;
  /** The offending IP, or null when blocked by name (e.g. "localhost"). */
  readonly address: string | null;
  readonly addressClass: AddressClass;

  constructor(hostname: string, address: string | null, addressClass: AddressClass) {
    const target = address && address !== hostname ? `${hostname} (${address})` : hostname;
    super(`Blocked request to ${addressClass} address: ${target}`);
    this.name = 'BlockedAddressError';
    this.hostname = hostname;
    this.address = address;
    this.addressClass = addressClass;
  }
}

export class InvalidTargetUrlError extends Error {
  readonly code = 'INVALID_URL';
  readonly url: string;

  constructor(url: string, reason: string) {
    super(`Invalid target URL: ${reason}`);
    this.name = 'InvalidTargetUrlError';
    this.url = url;
  }
}

/**
 * Policy decision for one address. 'metadata' and 'invalid' stay blocked even
 * with allowPrivateNetwork: cloud credentials are never a legitimate scrape
 * target, and an unparseable address cannot be judged.
 */
export function isBlockedAddress(ip: string, opts: { allowPrivateNetwork: boolean }): boolean {
  const cls = classifyAddress(ip);
  if (cls === 'public') return false;
  if (cls === 'metadata' || cls === 'invalid') return true;
  return !opts.allowPrivateNetwork;
}

/** Lower-cased hostname without IPv6 brackets or trailing dots. */
function normalizeHost(hostname: string): string {
  let h = hostname.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h.replace(/\.+$/, '');
}

// RFC 6761: localhost and *.localhost always mean the loopback interface, so
// block them by name rather than trusting whatever a resolver says.
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

function checkAddress(ip: string, hostname: string, opts: SsrfOptions): void {
  if (!isBlockedAddress(ip, opts)) return;
  if (opts.isAllowed?.(ip, hostname)) return;
  throw new BlockedAddressError(hostname, ip, classifyAddress(ip));
}

function checkHostname(hostname: string, opts: SsrfOptions): void {
  if (!opts.allowPrivateNetwork && isLocalhostName(normalizeHost(hostname))) {
    throw new BlockedAddressError(hostname, null, 'loopback');
  }
}

/**
 * Early, DNS-free check of a target URL: http(s) only; IP-literal hosts and
 * localhost names are judged directly. Hostnames needing DNS pass here and are
 * checked at connect time by the guarded lookup.
 */
export function assertUrlAllowed(url: URL | string, opts: SsrfOptions): URL {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    throw new InvalidTargetUrlError(String(url), 'not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InvalidTargetUrlError(parsed.href, `unsupported scheme "${parsed.protocol}"`);
  }
  // WHATWG URL already canonicalises odd IPv4 spellings (2130706433, 0x7f.1,
  // 127.1) to dotted quads and IPv6 to compressed hex, so isIP sees them.
  const host = normalizeHost(parsed.hostname);
  if (host === '') throw new InvalidTargetUrlError(parsed.href, 'missing host');
  if (isIP(host)) checkAddress(host, host, opts);
  else checkHostname(parsed.hostname, opts);
  return parsed;
}

/**
 * The request-time half of the policy for a URL a caller names (a scrape, crawl or batch target, a
 * monitor target, an agent's urls, a webhook): refused with 403 SCRAPE_BLOCKED_URL naming the body's
 * field when its host is a blocked address literal (any spelling the URL parser accepts) or a
 * localhost name, so no job is created for it. Host names needing DNS pass here and are judged at
 * connect time, on every hop. A URL that does not parse passes too: the request schema answers it.
 */
export function refuseBlockedTarget(url: string, field: string, opts: SsrfOptions): void {
  const blocked = blockedTarget(url, opts);
  if (blocked) throw new BlockedUrlError(blocked.message, field);
}

/** The BlockedAddressError refuseBlockedTarget would answer for, or null. */
export function blockedTarget(url: string, opts: SsrfOptions): BlockedAddressError | null {
  try {
    assertUrlAllowed(url, opts);
    return null;
  } catch (err) {
    return err instanceof BlockedAddressError ? err : null;
  }
}

const systemResolver: Resolver = (hostname, options) => dnsPromises.lookup(hostname, { ...options, all: true });

/**
 * A dns.lookup-compatible function (callback style, honours options.all) for
 * net/tls connect and undici's `connect.lookup`. Rejects with
 * BlockedAddressError if ANY resolved address is blocked, so a mixed
 * public+private answer cannot be used to sneak through on a later attempt.
 */
export function createGuardedLookup(opts: GuardedLookupOptions): LookupFunction {
  const resolve = opts.resolver ?? systemResolver;

  async function guardedResolve(hostname: string, options: LookupOptions): Promise<LookupAddress[]> {
    checkHostname(hostname, opts);
    const addresses = await resolve(hostname, { ...options, all: true });
    if (addresses.length === 0) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
    }
    for (const { address } of addresses) checkAddress(address, hostname, opts);
    return addresses;
  }

  // dns.lookup also accepts (hostname, family, cb) and (hostname, cb); net always
  // passes an options object, but accept the other shapes for compatibility.
  return ((hostname: string, options: unknown, callback?: unknown) => {
    let cb = callback as Parameters<LookupFunction>[2];
    let lookupOptions: LookupOptions;
    if (typeof options === 'function') {
      cb = options as Parameters<LookupFunction>[2];
      lookupOptions = {};
    } else if (typeof options === 'number') {
      lookupOptions = { family: options };
    } else {
      lookupOptions = (options ?? {}) as LookupOptions;
    }
    guardedResolve(hostname, lookupOptions).then(
      (addresses) => {
        if (lookupOptions.all) cb(null, addresses);
        else cb(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => cb(err, lookupOptions.all ? [] : ''),
    );
  }) as LookupFunction;
}

/**
 * An undici Agent whose every connection goes through the SSRF guard. Compose
 * redirects on top, e.g. `agent.compose(interceptors.redirect({ maxRedirections: 5 }))`;
 * each hop opens its connection through this same guard.
 */
export function createGuardedAgent(opts: GuardedAgentOptions): Agent {
  const lookup = createGuardedLookup(opts);
  const baseConnect = buildConnector({
    lookup,
    timeout: opts.connectTimeoutMs ?? 10_000,
    keepAlive: true,
    // Happy-eyeballs: lookup is called with all:true and every candidate is checked.
    autoSelectFamily: true,
    rejectUnauthorized: opts.rejectUnauthorized ?? true,
  });

  // IP-literal hosts never reach `lookup` (net connects to them directly), and
  // undici's dns interceptor rewrites origins to IPs, so check literals here.
  const connect: buildConnector.connector = (options, callback) => {
    const host = normalizeHost(options.hostname);
    if (isIP(host)) {
      try {
        checkAddress(host, host, opts);
      } catch (err) {
        callback(err as Error, null);
        return;
      }
    }
    baseConnect(options, callback);
  };

  return new Agent({
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    ...opts.agentOptions,
    connect,
  });
}
