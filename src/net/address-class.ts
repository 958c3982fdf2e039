// Pure classification of IP address strings, used by the SSRF guard.
// CIDR math on BigInt keeps IPv4 and IPv6 on one code path; no I/O here.
import { isIPv4, isIPv6 } from 'node:net';

export type AddressClass =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'carrier-nat'
  | 'documentation'
  | 'benchmark'
  | 'unique-local'
  | 'invalid';

interface Range {
  base: bigint;
  prefix: number;
  bits: 32 | 128;
  cls: AddressClass;
}

function ipv4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

// Expects a string that net.isIPv6 accepted (zone already stripped).
function ipv6ToBigInt(ip: string): bigint {
  let s = ip;
  // A dotted IPv4 tail (e.g. ::ffff:1.2.3.4) becomes two hex groups.
  const lastColon = s.lastIndexOf(':');
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = Number(ipv4ToBigInt(tail));
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, rest] = s.split('::');
  const headGroups = head ? head.split(':') : [];
  let groups = headGroups;
  if (rest !== undefined) {
    const restGroups = rest ? rest.split(':') : [];
    const fill = new Array<string>(8 - headGroups.length - restGroups.length).fill('0');
    groups = [...headGroups, ...fill, ...restGroups];
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function range(cidr: string, cls: AddressClass): Range {
  const [addr, len] = cidr.split('/');
  const v4 = isIPv4(addr);
  return { base: v4 ? ipv4ToBigInt(addr) : ipv6ToBigInt(addr), prefix: Number(len), bits: v4 ? 32 : 128, cls };
}

function inRange(value: bigint, r: Range): boolean {
  const shift = BigInt(r.bits - r.prefix);
  return value >> shift === r.base >> shift;
}

// First match wins, so single-address entries come before the blocks containing them.
const IPV4_RANGES: Range[] = [
  range('169.254.169.254/32', 'metadata'), // AWS/GCP/Azure/OpenStack instance metadata
  range('169.254.170.2/32', 'metadata'), // AWS ECS task metadata
  range('100.100.100.200/32', 'metadata'), // Alibaba Cloud metadata
  range('168.63.129.16/32', 'metadata'), // Azure WireServer (public-looking, host-internal)
  range('255.255.255.255/32', 'broadcast'),
  range('0.0.0.0/8', 'unspecified'), // "this network"; 0.0.0.0 reaches the local host on Linux
  range('10.0.0.0/8', 'private'),
  range('172.16.0.0/12', 'private'),
  range('192.168.0.0/16', 'private'),
  range('100.64.0.0/10', 'carrier-nat'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  range('192.88.99.0/24', 'reserved'), // deprecated 6to4 relay anycast
  range('192.0.2.0/24', 'documentation'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('198.18.0.0/15', 'benchmark'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
];

// IPv6 prefixes that carry an IPv4 address: classify by that address, since
// the packet may end up there (dual-stack sockets, NAT64 gateways, 6to4 relays).
const IPV4_EMBEDDING: { range: Range; extract: (v: bigint) => bigint }[] = [
  { range: range('::ffff:0:0/96', 'reserved'), extract: (v) => v & 0xffffffffn }, // IPv4-mapped
  { range: range('::ffff:0:0:0/96', 'reserved'), extract: (v) => v & 0xffffffffn }, // IPv4-translated (SIIT)
  { range: range('64:ff9b::/96', 'reserved'), extract: (v) => v & 0xffffffffn }, // NAT64 well-known prefix
  { range: range('2002::/16', 'reserved'), extract: (v) => (v >> 80n) & 0xffffffffn }, // 6to4
];

const IPV6_RANGES: Range[] = [
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('fd00:ec2::254/128', 'metadata'), // AWS IMDS over IPv6
  range('::/96', 'reserved'), // deprecated IPv4-compatible addresses
  range('100::/64', 'reserved'), // discard-only
  range('64:ff9b:1::/48', 'private'), // local-use NAT64
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
  range('2001:2::/48', 'benchmark'),
  range('2001::/23', 'reserved'), // IETF protocol assignments, incl. Teredo (2001::/32)
  range('fc00::/7', 'unique-local'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'reserved'), // deprecated site-local
  range('ff00::/8', 'multicast'),
];
const GLOBAL_UNICAST = range('2000::/3', 'public');

function classifyIPv4Value(value: bigint): AddressClass {
  return IPV4_RANGES.find((r) => inRange(value, r))?.cls ?? 'public';
}

/**
 * Classify a textual IP address. Only canonical forms node:net accepts are
 * valid; anything else (hostnames, '127.1', '') is 'invalid'. Leading/trailing
 * IPv6 brackets and a %zone suffix are tolerated.
 */
export function classifyAddress(ip: string): AddressClass {
  let s = ip.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);

  if (isIPv4(s)) return classifyIPv4Value(ipv4ToBigInt(s));
  if (!isIPv6(s)) return 'invalid';

  const value = ipv6ToBigInt(s);
  for (const { range: r, extract } of IPV4_EMBEDDING) {
    if (inRange(value, r)) return classifyIPv4Value(extract(value));
  }
  const special = IPV6_RANGES.find((r) => inRange(value, r));
  if (special) return special.cls;
  // Outside 2000::/3 nothing is allocated for global unicast: treat as reserved.
  return inRange(value, GLOBAL_UNICAST) ? 'public' : 'reserved';
}
