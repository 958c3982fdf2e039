// DASH manifests (MPD, ISO/IEC 23009-1), read without fetching: for the highest-bandwidth video
// and audio representation of a static, single-period presentation, the initialisation segment
// and the media segment URLs in play order. Handled: SegmentTemplate ($RepresentationID$,
// $Number[%0Nd]$, $Bandwidth$, $Time$; with a SegmentTimeline or a fixed @duration),
// SegmentList (Initialization@sourceURL, SegmentURL@media), and one file per representation
// (BaseURL, with or without SegmentBase), with BaseURL inherited MPD → Period → AdaptationSet →
// Representation. Refused by name: live (type="dynamic"), several periods, DRM
// (ContentProtection), byte ranges (@range, @mediaRange), URLs that are not http(s), and
// templates asking for absurd widths ($Number%0999999999d$) or more than MAX_SEGMENTS segments.
import type { Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { httpUrl } from './discover.ts';
import { MAX_SEGMENTS } from './hls.ts';

export interface DashTrack {
  contentType: 'video' | 'audio';
  bandwidth: number;
  init?: string;
  segments: string[];
}

export interface DashManifest {
  video?: DashTrack;
  audio?: DashTrack;
  /** Seconds (mediaPresentationDuration or the period's duration). */
  duration?: number;
}

/** Why a manifest cannot be used (the caller names the URL). */
export class DashUnsupported extends Error {}

/** The widest $Number%0Nd$ / $Time%0Nd$ padding taken (a 64-bit number has 20 digits). */
const MAX_WIDTH = 20;

export function parseMpd(xml: string, mpdUrl: string): DashManifest {
  const doc = parseDocument(xml, { xmlMode: true });
  const mpd = doc.children.find((n): n is Element => isElement(n) && local(n.name) === 'MPD');
  if (!mpd) throw new DashUnsupported('not a DASH manifest (no MPD element)');
  if (mpd.attribs.type === 'dynamic') throw new DashUnsupported('live DASH (type="dynamic") is not supported');
  const periods = kids(mpd, 'Period');
  if (periods.length !== 1)
    throw new DashUnsupported(periods.length ? 'multi-period DASH is not supported' : 'the manifest has no Period');
  const period = periods[0];
  const duration = isoDuration(period.attribs.duration) ?? isoDuration(mpd.attribs.mediaPresentationDuration);
  const periodBase = baseOf(period, baseOf(mpd, mpdUrl));

  const best: Partial<Record<'video' | 'audio', { rep: Element; set: Element; bandwidth: number; base: string }>> = {};
  for (const set of kids(period, 'AdaptationSet')) {
    const setBase = baseOf(set, periodBase);
    for (const rep of kids(set, 'Representation')) {
      if (kids(set, 'ContentProtection').length || kids(rep, 'ContentProtection').length) {
        throw new DashUnsupported('DRM-protected DASH (ContentProtection) is not supported');
      }
      const type = contentTypeOf(set, rep);
      if (!type) continue;
      const bandwidth = Number(rep.attribs.bandwidth) || 0;
      if (!best[type] || bandwidth > best[type].bandwidth)
        best[type] = { rep, set, bandwidth, base: baseOf(rep, setBase) };
    }
  }
  const out: DashManifest = duration !== undefined ? { duration } : {};
  for (const type of ['video', 'audio'] as const) {
    const b = best[type];
    if (b)
      out[type] = {
        contentType: type,
        bandwidth: b.bandwidth,
        ...segmentsOf(b.rep, b.set, period, b.base, mpdUrl, duration),
      };
  }
  if (!out.video && !out.audio) throw new DashUnsupported('the manifest has no video or audio representation');
  return out;
}

function segmentsOf(
  rep: Element,
  set: Element,
  period: Element,
  base: string,
  mpdUrl: string,
  duration: number | undefined,
): { init?: string; segments: string[] } {
  const levels = [rep, set, period];
  const templates = levels.map((el) => kids(el, 'SegmentTemplate')[0]).filter(Boolean);
  if (templates.length) {
    // Attributes inherit from the outer levels; the innermost wins.
    const t: Record<string, string> = Object.assign({}, ...[...templates].reverse().map((el) => el.attribs));
    const timeline = templates.map((el) => kids(el, 'SegmentTimeline')[0]).find(Boolean);
    const vars = { RepresentationID: rep.attribs.id ?? '', Bandwidth: rep.attribs.bandwidth ?? '' };
    if (!t.media) throw new DashUnsupported('SegmentTemplate without @media');
    const timescale = Number(t.timescale ?? 1) || 1;
    const start = Number(t.startNumber ?? 1);
    const segments: string[] = [];
    const add = (number: number, time: number) => {
      if (segments.length >= MAX_SEGMENTS) throw new DashUnsupported(`more than ${MAX_SEGMENTS} segments`);
      segments.push(resolve(fill(t.media, { ...vars, Number: number, Time: time }), base));
    };
    if (timeline) {
      const end = duration !== undefined ? duration * timescale : undefined;
      let time = 0;
      let number = start;
      for (const s of kids(timeline, 'S')) {
        if (s.attribs.t !== undefined) time = Number(s.attribs.t);
        const d = Number(s.attribs.d);
        let r = Number(s.attribs.r ?? 0);
        if (!(d > 0)) throw new DashUnsupported('a SegmentTimeline entry without a duration');
        if (r < 0) {
          // Repeat until the end of the period.
          if (end === undefined)
            throw new DashUnsupported('an open-ended SegmentTimeline repeat without a presentation duration');
          r = Math.ceil((end - time) / d) - 1;
        }
        for (let i = 0; i <= r; i++, number++, time += d) add(number, time);
      }
    } else if (t.duration) {
      if (duration === undefined) throw new DashUnsupported('SegmentTemplate@duration without a presentation duration');
      const d = Number(t.duration);
      const count = Math.ceil((duration * timescale) / d - 1e-9);
      for (let i = 0; i < count; i++) add(start + i, i * d);
    } else {
      throw new DashUnsupported('SegmentTemplate without a SegmentTimeline or @duration');
    }
    return { ...(t.initialization ? { init: resolve(fill(t.initialization, vars), base) } : {}), segments };
  }
  const list = levels.map((el) => kids(el, 'SegmentList')[0]).find(Boolean);
  if (list) {
    const initEl = kids(list, 'Initialization')[0];
    if (initEl?.attribs.range)
      throw new DashUnsupported('byte-range initialisation (Initialization@range) is not supported');
    const segments = kids(list, 'SegmentURL').map((s) => {
      if (s.attribs.mediaRange || !s.attribs.media)
        throw new DashUnsupported('byte-range segments (SegmentURL@mediaRange) are not supported');
      return resolve(s.attribs.media, base);
    });
    if (!segments.length) throw new DashUnsupported('an empty SegmentList');
    return { ...(initEl?.attribs.sourceURL ? { init: resolve(initEl.attribs.sourceURL, base) } : {}), segments };
  }
  // SegmentBase or nothing: the representation is one file, at its BaseURL.
  if (base === mpdUrl) throw new DashUnsupported('a representation without segment information or BaseURL');
  return { segments: [base] };
}

function contentTypeOf(set: Element, rep: Element): 'video' | 'audio' | undefined {
  const declared = set.attribs.contentType ?? (rep.attribs.mimeType ?? set.attribs.mimeType ?? '').split('/', 1)[0];
  return declared === 'video' || declared === 'audio' ? declared : undefined;
}

// $RepresentationID$, $Bandwidth$, $Number$, $Time$ (each with an optional %0Nd width), $$.
function fill(template: string, vars: Record<string, string | number>): string {
  return template.replace(
    /\$(RepresentationID|Number|Bandwidth|Time)?(?:%0(\d+)d)?\$/g,
    (all, name: string | undefined, width?: string) => {
      if (!name) return '$';
      if (Number(width) > MAX_WIDTH) throw new DashUnsupported(`a $${name}$ padding of ${width} digits`);
      const v = String(vars[name] ?? '');
      return width ? v.padStart(Number(width), '0') : v;
    },
  );
}

/** ISO 8601 duration (PnDTnHnMnS) in seconds. */
export function isoDuration(text: string | undefined): number | undefined {
  const m =
    text &&
    /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(text.trim());
  if (!m) return undefined;
  const [d, h, min, s] = m.slice(1).map((x) => Number(x ?? 0));
  return d * 86400 + h * 3600 + min * 60 + s;
}

function baseOf(el: Element, parent: string): string {
  const b = kids(el, 'BaseURL')[0];
  const text = b ? textOf(b).trim() : '';
  return text ? resolve(text, parent) : parent;
}

function resolve(ref: string, base: string): string {
  const url = httpUrl(ref, base);
  if (!url) throw new DashUnsupported(`the manifest gives "${ref.slice(0, 200)}", which is not an http(s) URL`);
  return url.href;
}

function kids(el: Element, name: string): Element[] {
  return el.children.filter((n): n is Element => isElement(n) && local(n.name) === name);
}

function isElement(n: unknown): n is Element {
  return (n as Element).type === 'tag';
}

function local(name: string): string {
  return name.slice(name.indexOf(':') + 1);
}

function textOf(el: Element): string {
  return el.children.map((c) => ('data' in c ? String(c.data) : isElement(c) ? textOf(c) : '')).join('');
}
