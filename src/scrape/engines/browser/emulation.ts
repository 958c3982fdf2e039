// What the page sees of its visitor: device (desktop, or a real mobile profile from Playwright's
// device descriptors), country (timezone and locale), languages (Accept-Language and
// navigator.language/languages), and the caller's headers and cookies.
import type { BrowserContextOptions } from 'playwright-core';
import { playwright } from './playwright.ts';

export interface BrowserLocation {
  /** ISO 3166-1 alpha-2 (case-insensitive). Default US; unknown countries get UTC and en-US. */
  country?: string;
  /** Most preferred first, e.g. ["de-DE", "de"]. Default: the country's locale. */
  languages?: string[];
}

interface CountryProfile {
  timezoneId: string;
  locale: string;
}

/** The common countries: a representative timezone (the most populous one) and locale. */
export const COUNTRIES: Record<string, CountryProfile> = {
  US: { timezoneId: 'America/New_York', locale: 'en-US' },
  CA: { timezoneId: 'America/Toronto', locale: 'en-CA' },
  MX: { timezoneId: 'America/Mexico_City', locale: 'es-MX' },
  BR: { timezoneId: 'America/Sao_Paulo', locale: 'pt-BR' },
  AR: { timezoneId: 'America/Argentina/Buenos_Aires', locale: 'es-AR' },
  CL: { timezoneId: 'America/Santiago', locale: 'es-CL' },
  CO: { timezoneId: 'America/Bogota', locale: 'es-CO' },
  PE: { timezoneId: 'America/Lima', locale: 'es-PE' },
  GB: { timezoneId: 'Europe/London', locale: 'en-GB' },
  UK: { timezoneId: 'Europe/London', locale: 'en-GB' },
  IE: { timezoneId: 'Europe/Dublin', locale: 'en-IE' },
  FR: { timezoneId: 'Europe/Paris', locale: 'fr-FR' },
  DE: { timezoneId: 'Europe/Berlin', locale: 'de-DE' },
  AT: { timezoneId: 'Europe/Vienna', locale: 'de-AT' },
  CH: { timezoneId: 'Europe/Zurich', locale: 'de-CH' },
  NL: { timezoneId: 'Europe/Amsterdam', locale: 'nl-NL' },
  BE: { timezoneId: 'Europe/Brussels', locale: 'nl-BE' },
  LU: { timezoneId: 'Europe/Luxembourg', locale: 'fr-LU' },
  ES: { timezoneId: 'Europe/Madrid', locale: 'es-ES' },
  PT: { timezoneId: 'Europe/Lisbon', locale: 'pt-PT' },
  IT: { timezoneId: 'Europe/Rome', locale: 'it-IT' },
  SE: { timezoneId: 'Europe/Stockholm', locale: 'sv-SE' },
  NO: { timezoneId: 'Europe/Oslo', locale: 'nb-NO' },
  DK: { timezoneId: 'Europe/Copenhagen', locale: 'da-DK' },
  FI: { timezoneId: 'Europe/Helsinki', locale: 'fi-FI' },
  IS: { timezoneId: 'Atlantic/Reykjavik', locale: 'is-IS' },
  PL: { timezoneId: 'Europe/Warsaw', locale: 'pl-PL' },
  CZ: { timezoneId: 'Europe/Prague', locale: 'cs-CZ' },
  SK: { timezoneId: 'Europe/Bratislava', locale: 'sk-SK' },
  HU: { timezoneId: 'Europe/Budapest', locale: 'hu-HU' },
  RO: { timezoneId: 'Europe/Bucharest', locale: 'ro-RO' },
  BG: { timezoneId: 'Europe/Sofia', locale: 'bg-BG' },
  GR: { timezoneId: 'Europe/Athens', locale: 'el-GR' },
  HR: { timezoneId: 'Europe/Zagreb', locale: 'hr-HR' },
  RS: { timezoneId: 'Europe/Belgrade', locale: 'sr-RS' },
  SI: { timezoneId: 'Europe/Ljubljana', locale: 'sl-SI' },
  EE: { timezoneId: 'Europe/Tallinn', locale: 'et-EE' },
  LV: { timezoneId: 'Europe/Riga', locale: 'lv-LV' },
  LT: { timezoneId: 'Europe/Vilnius', locale: 'lt-LT' },
  UA: { timezoneId: 'Europe/Kyiv', locale: 'uk-UA' },
  RU: { timezoneId: 'Europe/Moscow', locale: 'ru-RU' },
  TR: { timezoneId: 'Europe/Istanbul', locale: 'tr-TR' },
  IL: { timezoneId: 'Asia/Jerusalem', locale: 'he-IL' },
  AE: { timezoneId: 'Asia/Dubai', locale: 'ar-AE' },
  SA: { timezoneId: 'Asia/Riyadh', locale: 'ar-SA' },
  EG: { timezoneId: 'Africa/Cairo', locale: 'ar-EG' },
  MA: { timezoneId: 'Africa/Casablanca', locale: 'fr-MA' },
  NG: { timezoneId: 'Africa/Lagos', locale: 'en-NG' },
  KE: { timezoneId: 'Africa/Nairobi', locale: 'en-KE' },
  ZA: { timezoneId: 'Africa/Johannesburg', locale: 'en-ZA' },
  IN: { timezoneId: 'Asia/Kolkata', locale: 'en-IN' },
  PK: { timezoneId: 'Asia/Karachi', locale: 'en-PK' },
  BD: { timezoneId: 'Asia/Dhaka', locale: 'bn-BD' },
  CN: { timezoneId: 'Asia/Shanghai', locale: 'zh-CN' },
  HK: { timezoneId: 'Asia/Hong_Kong', locale: 'zh-HK' },
  TW: { timezoneId: 'Asia/Taipei', locale: 'zh-TW' },
  JP: { timezoneId: 'Asia/Tokyo', locale: 'ja-JP' },
  KR: { timezoneId: 'Asia/Seoul', locale: 'ko-KR' },
  SG: { timezoneId: 'Asia/Singapore', locale: 'en-SG' },
  MY: { timezoneId: 'Asia/Kuala_Lumpur', locale: 'ms-MY' },
  ID: { timezoneId: 'Asia/Jakarta', locale: 'id-ID' },
  TH: { timezoneId: 'Asia/Bangkok', locale: 'th-TH' },
  VN: { timezoneId: 'Asia/Ho_Chi_Minh', locale: 'vi-VN' },
  PH: { timezoneId: 'Asia/Manila', locale: 'en-PH' },
  AU: { timezoneId: 'Australia/Sydney', locale: 'en-AU' },
  NZ: { timezoneId: 'Pacific/Auckland', locale: 'en-NZ' },
};

const FALLBACK: CountryProfile = { timezoneId: 'UTC', locale: 'en-US' };

export const DEFAULT_VIEWPORT = { width: 1280, height: 800 };
export const DEFAULT_MOBILE_DEVICE = 'Pixel 7';

/** The country's profile (US when none is given, UTC/en-US when the code is not in the table). */
export function countryProfile(country: string | undefined): CountryProfile {
  return COUNTRIES[(country ?? 'US').toUpperCase()] ?? FALLBACK;
}

/** Accept-Language for a preference list: the first at q=1, then decreasing by 0.1 (min 0.1). */
export function acceptLanguage(languages: readonly string[]): string {
  return languages.map((l, i) => (i === 0 ? l : `${l};q=${Math.max(0.1, 1 - i * 0.1).toFixed(1)}`)).join(',');
}

export interface EmulationInput {
  mobile: boolean;
  location?: BrowserLocation;
  headers?: Record<string, string>;
  viewport?: { width: number; height: number };
  /** Playwright device descriptor name used for `mobile` (default "Pixel 7"). */
  mobileDevice?: string;
  /** The launched Chromium's version ("156.0.8078.79"), to keep User-Agent strings truthful. */
  browserVersion: string;
}

export interface Emulation {
  options: BrowserContextOptions;
  /** Scripts to run in every document before its own. */
  initScripts: string[];
  /** Cookies from a `cookie` request header, for the target URL (added to the context). */
  cookieHeader?: string;
  /**
   * Accept-Language to set on each request, when it differs from what the locale alone gives
   * (several languages, or the caller's own header). Chromium sends the locale's value whatever
   * extraHTTPHeaders say, so the engine rewrites it on routed requests.
   */
  acceptLanguage?: string;
}

/** Context options and init scripts realising the request's device, location, languages and headers. */
export function emulation(input: EmulationInput): Emulation {
  const major = input.browserVersion.split('.')[0] || '140';
  const options: BrowserContextOptions = {};
  if (input.mobile) {
    const name = input.mobileDevice ?? DEFAULT_MOBILE_DEVICE;
    const device = playwright().devices[name];
    if (!device) throw new Error(`Unknown mobile device profile "${name}"`);
    const { defaultBrowserType: _browser, ...profile } = device;
    Object.assign(options, profile);
    // The descriptor's UA names Playwright's bundled Chrome; name the Chromium that actually runs.
    options.userAgent = profile.userAgent.replace(/Chrome\/[\d.]+/, `Chrome/${major}.0.0.0`);
  } else {
    options.viewport = { ...DEFAULT_VIEWPORT };
    options.screen = { width: 1920, height: 1080 };
    options.userAgent = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
  }
  if (input.viewport) options.viewport = { ...input.viewport };

  const country = countryProfile(input.location?.country);
  const languages = input.location?.languages?.length ? input.location.languages : [country.locale];
  options.timezoneId = country.timezoneId;
  options.locale = languages[0];

  const extra: Record<string, string> = {};
  let cookieHeader: string | undefined;
  let accept = languages.length > 1 ? acceptLanguage(languages) : undefined;
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    const key = name.toLowerCase();
    if (key === 'user-agent') options.userAgent = value;
    else if (key === 'cookie') cookieHeader = value;
    else if (key === 'accept-language') accept = value;
    else if (key === 'host' || key === 'content-length' || key === 'connection') continue;
    else extra[key] = value;
  }
  options.extraHTTPHeaders = extra;

  const initScripts: string[] = [];
  // Chromium derives navigator.languages from the locale alone; show the whole preference list.
  if (languages.length > 1) {
    initScripts.push(
      `(() => { const l = Object.freeze(${JSON.stringify(languages)}); ` +
        `Object.defineProperty(Navigator.prototype, 'languages', { get() { return l; }, configurable: true }); })();`,
    );
  }
  return { options, initScripts, cookieHeader, acceptLanguage: accept };
}

/** Cookies of a `cookie` header as Playwright cookies for the target URL. */
export function cookiesFromHeader(header: string, url: string): { name: string; value: string; url: string }[] {
  const out: { name: string; value: string; url: string }[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    out.push({ name: part.slice(0, eq).trim(), value: part.slice(eq + 1).trim(), url });
  }
  return out;
}
