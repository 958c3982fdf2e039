// The branding format: a page's visual identity read from the RENDERED page's computed styles
// (getComputedStyle after the page settled and the actions ran), never guessed from the HTML or by
// a model. `collectBranding` runs in the page (page.evaluate of a self-contained function: no
// closures, no external libraries); the browser engine calls it when a fetch asks for `branding`.
//
// What each field is (the spec's Branding shape):
// - colors (hex, upper case, `#RRGGBB`, or `#RRGGBBAA` when translucent; a field is absent when
//   the page has no such thing):
//   background: the body's background, else the html element's, else the canvas default #FFFFFF;
//   textPrimary: the colour of most visible text (weighted by text length);
//   textSecondary: the next most used text colour (other than textPrimary, link and heading colours);
//   link: the most used colour of links that are not buttons;
//   primary: the primary button's background (see components), else the link colour;
//   secondary: the secondary button's background when opaque, else its border or text colour;
//   accent: the heading colour when it differs from textPrimary and primary, else the link colour
//     when it differs from primary;
//   success / warning / error: the text (or, when opaque, background) colour of the first visible
//     element whose class, id or role names it (success; warning/warn; error/danger/invalid);
//     such status elements do not count as body text.
// - fonts: [{family}] first family of each font-family stack used by visible text, most used first.
// - typography: fontFamilies {primary: body text, heading: h1 (else h2, h3), code: code/pre};
//   fontSizes {h1, h2, h3, body} and lineHeights {heading: h1's, body: body text's} as computed
//   ("40px"); fontWeights {regular: body text's, bold: the heaviest weight ≥ 600 in use, medium:
//   a weight 500–599 in use, light: a weight < 400 in use}, each only when found.
// - spacing: baseUnit: the largest of 8, 6, 5, 4, 2 dividing at least 80% of the non-zero margins
//   and paddings of visible elements (else 1); borderRadius: the most used non-zero radius of
//   buttons, inputs and boxes; padding {button, input, body}, margins {body, paragraph, heading}.
// - components: buttonPrimary {background, textColor, borderRadius} is the first visible button
//   (button, input[type=submit|button], [role=button], a/elements with a btn/button class) whose class
//   says primary/cta, else the first with an opaque background; buttonSecondary {background,
//   textColor, borderColor, borderRadius} is a visible button styled otherwise (class
//   secondary/outline first); never Chromium's unstyled default button; input {background, textColor, borderColor, borderRadius, padding}.
// - images: logo: an <img> whose alt, class, id or src (or an ancestor's class or id) says "logo",
//   else the first <img> of the header; favicon: the icon link; ogImage: og:image. All absolute.
//   `logo` at the top level is images.logo.
// - colorScheme: `dark` when the background's luminance is under 0.4, else `light`.
// - icons {favicon, appleTouchIcon, svgCount}, animations {transitionDuration, easing} (the most
//   used non-zero transition), layout {maxWidth: the widest content container's max-width,
//   display: flex/grid in use}, personality {}: nothing in computed styles tells a personality.
import type { Page } from 'playwright-core';

// Type aliases, not interfaces: the response schema's loose objects need index-signature-compatible types.
export type BrandingColors = {
  primary?: string;
  secondary?: string;
  accent?: string;
  background?: string;
  textPrimary?: string;
  textSecondary?: string;
  link?: string;
  success?: string;
  warning?: string;
  error?: string;
};

export type Branding = {
  colorScheme: 'light' | 'dark';
  logo?: string;
  colors: BrandingColors;
  fonts: { family: string }[];
  typography: {
    fontFamilies: { primary?: string; heading?: string; code?: string };
    fontSizes: { h1?: string; h2?: string; h3?: string; body?: string };
    fontWeights: { light?: number; regular?: number; medium?: number; bold?: number };
    lineHeights: { heading?: string; body?: string };
  };
  spacing: {
    baseUnit: number;
    borderRadius?: string;
    padding: Record<string, string>;
    margins: Record<string, string>;
  };
  components: {
    buttonPrimary?: { background: string; textColor: string; borderRadius: string };
    buttonSecondary?: { background: string; textColor: string; borderColor: string; borderRadius: string };
    input?: Record<string, string>;
  };
  icons: Record<string, string | number>;
  images: { logo?: string; favicon?: string; ogImage?: string };
  animations: Record<string, string>;
  layout: Record<string, string>;
  personality: Record<string, never>;
};

// The few DOM types the in-page script uses (the project compiles without the DOM library).
interface DomRect {
  width: number;
  height: number;
}
type CssStyle = Record<string, string>;
interface DomNode {
  nodeType: number;
  textContent: string | null;
}
interface DomList<T> extends Iterable<T> {
  readonly length: number;
  readonly [i: number]: T;
}
interface DomElement extends DomNode {
  tagName: string;
  id: string;
  parentElement: DomElement | null;
  childNodes: DomList<DomNode>;
  currentSrc?: string;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): DomRect;
  closest(selector: string): DomElement | null;
  getElementsByTagName(tag: string): DomList<DomElement>;
}
interface Canvas2d {
  fillStyle: string;
  clearRect(x: number, y: number, w: number, h: number): void;
  fillRect(x: number, y: number, w: number, h: number): void;
  getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
}
interface DomDocument {
  body: DomElement | null;
  documentElement: DomElement;
  baseURI: string;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): DomList<DomElement>;
  createElement(tag: 'canvas'): { getContext(kind: '2d', options?: object): Canvas2d | null };
}
interface DomWindow {
  document: DomDocument;
  getComputedStyle(el: DomElement): CssStyle;
}

/** Runs collectBranding in the page. */
export async function extractBranding(page: Page): Promise<Branding> {
  return page.evaluate(collectBranding);
}

/**
 * Self-contained: serialised by Playwright and run in the page. Keep every helper inside, use only
 * DOM APIs, and no TypeScript syntax that is not erasable.
 */
export function collectBranding(): Branding {
  const win = globalThis as unknown as DomWindow;
  const doc = win.document;
  const MAX_ELEMENTS = 4000;

  // --- colours ---
  let canvasCtx: Canvas2d | null | undefined;
  const parseColor = (value: string): [number, number, number, number] | undefined => {
    const v = value.trim();
    let m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/i.exec(v);
    if (m) {
      const a = m[4] === undefined ? 1 : m[4].endsWith('%') ? Number.parseFloat(m[4]) / 100 : Number.parseFloat(m[4]);
      return [Number(m[1]), Number(m[2]), Number(m[3]), a];
    }
    m = /^color\(srgb\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s*\/\s*([\d.]+))?\s*\)$/i.exec(v);
    if (m) return [Number(m[1]) * 255, Number(m[2]) * 255, Number(m[3]) * 255, m[4] === undefined ? 1 : Number(m[4])];
    if (v === 'transparent' || v === '' || v === 'none') return undefined;
    // Any other colour function (oklch, lab...): let a canvas convert it.
    if (canvasCtx === undefined) canvasCtx = doc.createElement('canvas').getContext('2d', { willReadFrequently: true });
    if (!canvasCtx) return undefined;
    canvasCtx.clearRect(0, 0, 1, 1);
    canvasCtx.fillStyle = '#000000';
    canvasCtx.fillStyle = v;
    canvasCtx.fillRect(0, 0, 1, 1);
    const d = canvasCtx.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const hex2 = (n: number) =>
    Math.max(0, Math.min(255, Math.round(n)))
      .toString(16)
      .padStart(2, '0')
      .toUpperCase();
  /** '#RRGGBB' ('#RRGGBBAA' when translucent); undefined when fully transparent or unparsable. */
  const toHex = (value: string | null | undefined): string | undefined => {
    if (!value) return undefined;
    const c = parseColor(value);
    if (!c || c[3] <= 0) return undefined;
    const base = `#${hex2(c[0])}${hex2(c[1])}${hex2(c[2])}`;
    return c[3] >= 1 ? base : `${base}${hex2(c[3] * 255)}`;
  };
  const opaque = (value: string): string | undefined => {
    const c = parseColor(value);
    return c && c[3] >= 1 ? toHex(value) : undefined;
  };
  const luminance = (hex: string): number => {
    const ch = [1, 3, 5]
      .map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  };

  // --- helpers ---
  const style = (el: DomElement) => win.getComputedStyle(el);
  const visible = (el: DomElement): boolean => {
    const s = style(el);
    if (s.display === 'none' || s.visibility === 'hidden' || s.visibility === 'collapse' || Number(s.opacity) === 0)
      return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const firstFamily = (stack: string): string | undefined => {
    const first = stack
      .split(',')[0]
      ?.trim()
      .replace(/^["']|["']$/g, '');
    return first || undefined;
  };
  const abs = (url: string | null | undefined): string | undefined => {
    if (!url) return undefined;
    try {
      return new URL(url, doc.baseURI).href;
    } catch {
      return undefined;
    }
  };
  const tally = <K>(map: Map<K, number>, key: K | undefined, n = 1) => {
    if (key !== undefined) map.set(key, (map.get(key) ?? 0) + n);
  };
  const ranked = <K>(map: Map<K, number>): K[] => [...map.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]);
  const labelOf = (el: DomElement): string =>
    `${el.getAttribute('class') ?? ''} ${el.id} ${el.getAttribute('role') ?? ''}`.toLowerCase();
  const ownText = (el: DomElement): number => {
    let n = 0;
    for (const node of el.childNodes) if (node.nodeType === 3) n += (node.textContent ?? '').trim().length;
    return n;
  };
  const px = (v: string) => Number.parseFloat(v) || 0;

  const body = doc.body ?? doc.documentElement;
  const bodyStyle = style(body);

  // --- buttons and inputs ---
  const STATE = /success|warning|\bwarn\b|error|danger|invalid|\balert\b/;
  const BUTTON_SELECTOR =
    'button, input[type=submit], input[type=button], [role=button], a[class*=btn], a[class*=button], [class~=btn], [class~=button], [class*="btn-"], [class*="button-"]';
  // Chromium's unstyled button (buttonface background, outset border) says nothing about the brand.
  const unstyled = (el: DomElement) => {
    const s = style(el);
    return s.borderTopStyle === 'outset' && /^rgb\(239, 239, 239\)$/.test(s.backgroundColor);
  };
  const buttons = [...doc.querySelectorAll(BUTTON_SELECTOR)].filter((b) => visible(b) && !unstyled(b)).slice(0, 200);
  const isPrimaryLabel = (el: DomElement) => /primary|cta/.test(labelOf(el));
  const isSecondaryLabel = (el: DomElement) => /secondary|outline|ghost/.test(labelOf(el));
  const primaryEl =
    buttons.find((b) => isPrimaryLabel(b) && opaque(style(b).backgroundColor)) ??
    buttons.find((b) => !isSecondaryLabel(b) && opaque(style(b).backgroundColor));
  const buttonPrimary = primaryEl
    ? {
        background: toHex(style(primaryEl).backgroundColor) ?? '',
        textColor: toHex(style(primaryEl).color) ?? '',
        borderRadius: style(primaryEl).borderTopLeftRadius,
      }
    : undefined;
  const signature = (el: DomElement) => {
    const s = style(el);
    return `${s.backgroundColor}|${s.color}|${s.borderTopColor}|${s.borderTopWidth}`;
  };
  const secondaryEl =
    buttons.find((b) => b !== primaryEl && isSecondaryLabel(b)) ??
    buttons.find((b) => b !== primaryEl && (!primaryEl || signature(b) !== signature(primaryEl)));
  let buttonSecondary: Branding['components']['buttonSecondary'];
  if (secondaryEl) {
    const s = style(secondaryEl);
    buttonSecondary = {
      background: toHex(s.backgroundColor) ?? 'transparent',
      textColor: toHex(s.color) ?? '',
      borderColor:
        px(s.borderTopWidth) > 0 && s.borderTopStyle !== 'none'
          ? (toHex(s.borderTopColor) ?? 'transparent')
          : 'transparent',
      borderRadius: s.borderTopLeftRadius,
    };
  }
  const inputEl = [
    ...doc.querySelectorAll(
      'input:not([type]), input[type=text], input[type=email], input[type=search], input[type=url], input[type=tel], input[type=password], textarea',
    ),
  ].find(visible);
  let input: Record<string, string> | undefined;
  if (inputEl) {
    const s = style(inputEl);
    input = {
      background: toHex(s.backgroundColor) ?? 'transparent',
      textColor: toHex(s.color) ?? '',
      borderColor: toHex(s.borderTopColor) ?? 'transparent',
      borderRadius: s.borderTopLeftRadius,
      padding: s.padding,
    };
  }

  // --- text: colours, fonts, weights ---
  const headingEls = [...doc.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter(visible);
  const textColors = new Map<string, number>();
  const linkColors = new Map<string, number>();
  const families = new Map<string, number>();
  const weights = new Map<number, number>();
  const bodyFamilies = new Map<string, number>();
  const bodySizes = new Map<string, number>();
  const bodyLines = new Map<string, number>();
  const bodyWeights = new Map<number, number>();
  const spacings: number[] = [];
  const radii = new Map<string, number>();
  const transitions = new Map<string, number>();
  let displayFlex = 0;
  let displayGrid = 0;
  let maxWidth: { px: number; value: string } | undefined;
  const all = body.getElementsByTagName('*');
  const limit = Math.min(all.length, MAX_ELEMENTS);
  const buttonSet = new Set(buttons);
  for (let i = 0; i < limit; i++) {
    const el = all[i];
    const tag = el.tagName;
    if (
      tag === 'SCRIPT' ||
      tag === 'STYLE' ||
      tag === 'NOSCRIPT' ||
      tag === 'TEMPLATE' ||
      tag === 'svg' ||
      tag === 'SVG'
    )
      continue;
    const s = style(el);
    if (s.display === 'none' || s.visibility === 'hidden') continue;
    if (s.display.includes('flex')) displayFlex++;
    if (s.display.includes('grid')) displayGrid++;
    for (const v of [s.marginTop, s.marginBottom, s.paddingTop, s.paddingRight, s.paddingBottom, s.paddingLeft]) {
      const n = px(v);
      if (n > 0 && n < 200) spacings.push(Math.round(n));
    }
    const radius = s.borderTopLeftRadius;
    if (
      px(radius) > 0 &&
      (buttonSet.has(el) ||
        /^(INPUT|TEXTAREA|SELECT)$/.test(tag) ||
        px(s.borderTopWidth) > 0 ||
        opaque(s.backgroundColor))
    )
      tally(radii, radius);
    if (s.transitionDuration && s.transitionDuration.split(',').some((d: string) => px(d) > 0))
      tally(
        transitions,
        `${s.transitionDuration.split(',')[0].trim()}|${s.transitionTimingFunction.split(',')[0].trim()}`,
      );
    if (s.maxWidth.endsWith('px') && px(s.maxWidth) >= 480 && (!maxWidth || px(s.maxWidth) > maxWidth.px))
      maxWidth = { px: px(s.maxWidth), value: s.maxWidth };
    const text = ownText(el);
    if (text === 0) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || Number(s.opacity) === 0) continue;
    const color = toHex(s.color);
    tally(families, firstFamily(s.fontFamily), text);
    tally(weights, Number(s.fontWeight), text);
    const inButton = buttonSet.has(el) || !!el.closest(BUTTON_SELECTOR);
    const inHeading = /^H[1-6]$/.test(tag) || !!el.closest('h1, h2, h3, h4, h5, h6');
    if (tag === 'A' || el.closest('a')) {
      if (!inButton) tally(linkColors, color, text);
      continue;
    }
    if (inButton || inHeading || /^(CODE|PRE|KBD|SAMP)$/.test(tag) || el.closest('pre, code')) continue;
    if (STATE.test(labelOf(el))) continue; // status messages have colours of their own
    tally(textColors, color, text);
    tally(bodyFamilies, firstFamily(s.fontFamily), text);
    tally(bodySizes, s.fontSize, text);
    tally(bodyLines, s.lineHeight, text);
    tally(bodyWeights, Number(s.fontWeight), text);
  }

  // --- colours ---
  const background =
    opaque(bodyStyle.backgroundColor) ?? opaque(style(doc.documentElement).backgroundColor) ?? '#FFFFFF';
  const textRank = ranked(textColors);
  const textPrimary = textRank[0] ?? toHex(bodyStyle.color);
  const link = ranked(linkColors)[0];
  const headingColor = headingEls.length ? toHex(style(headingEls[0]).color) : undefined;
  const textSecondary = textRank.find((c) => c !== textPrimary && c !== link && c !== headingColor);
  const primary = buttonPrimary?.background || link;
  let secondary: string | undefined;
  if (secondaryEl) {
    const s = style(secondaryEl);
    secondary =
      opaque(s.backgroundColor) ?? (px(s.borderTopWidth) > 0 ? toHex(s.borderTopColor) : undefined) ?? toHex(s.color);
  }
  let accent: string | undefined;
  if (headingColor && headingColor !== textPrimary && headingColor !== primary) accent = headingColor;
  else if (link && link !== primary) accent = link;
  const stateColor = (re: RegExp): string | undefined => {
    for (const el of doc.querySelectorAll('[class], [id], [role]')) {
      if (!re.test(labelOf(el)) || !visible(el)) continue;
      const s = style(el);
      const c = toHex(s.color);
      if (c && c !== textPrimary) return c;
      const bg = opaque(s.backgroundColor);
      if (bg && bg !== background) return bg;
    }
    return undefined;
  };
  const colors: BrandingColors = {};
  const setColor = (k: keyof BrandingColors, v: string | undefined) => {
    if (v) colors[k] = v;
  };
  setColor('primary', primary);
  setColor('secondary', secondary);
  setColor('accent', accent);
  setColor('background', background);
  setColor('textPrimary', textPrimary);
  setColor('textSecondary', textSecondary);
  setColor('link', link);
  setColor('success', stateColor(/success/));
  setColor('warning', stateColor(/warning|\bwarn\b/));
  setColor('error', stateColor(/error|danger|invalid/));

  // --- typography ---
  const heading = (tag: string) => headingEls.find((h) => h.tagName === tag);
  const h1 = heading('H1');
  const firstHeading = h1 ?? heading('H2') ?? heading('H3');
  const codeEl = [...doc.querySelectorAll('code, pre, kbd, samp')].find(visible);
  const primaryFamily = ranked(bodyFamilies)[0] ?? firstFamily(bodyStyle.fontFamily);
  const fontFamilies: Branding['typography']['fontFamilies'] = {};
  if (primaryFamily) fontFamilies.primary = primaryFamily;
  const headingFamily = firstHeading ? firstFamily(style(firstHeading).fontFamily) : undefined;
  if (headingFamily) fontFamilies.heading = headingFamily;
  const codeFamily = codeEl ? firstFamily(style(codeEl).fontFamily) : undefined;
  if (codeFamily) fontFamilies.code = codeFamily;
  const fontSizes: Branding['typography']['fontSizes'] = {};
  for (const tag of ['H1', 'H2', 'H3'] as const) {
    const h = heading(tag);
    if (h) fontSizes[tag.toLowerCase() as 'h1' | 'h2' | 'h3'] = style(h).fontSize;
  }
  fontSizes.body = ranked(bodySizes)[0] ?? bodyStyle.fontSize;
  const lineHeights: Branding['typography']['lineHeights'] = {};
  if (firstHeading) lineHeights.heading = style(firstHeading).lineHeight;
  lineHeights.body = ranked(bodyLines)[0] ?? bodyStyle.lineHeight;
  const fontWeights: Branding['typography']['fontWeights'] = {};
  const usedWeights = ranked(weights);
  const regular = ranked(bodyWeights)[0] ?? Number(bodyStyle.fontWeight);
  if (regular) fontWeights.regular = regular;
  const light = usedWeights.filter((w) => w < 400).sort((a, b) => a - b)[0];
  if (light) fontWeights.light = light;
  const medium = usedWeights.find((w) => w >= 500 && w < 600);
  if (medium) fontWeights.medium = medium;
  const bold = usedWeights.filter((w) => w >= 600).sort((a, b) => b - a)[0];
  if (bold) fontWeights.bold = bold;

  // --- spacing ---
  let baseUnit = 1;
  if (spacings.length) {
    for (const unit of [8, 6, 5, 4, 2]) {
      if (spacings.filter((n) => n % unit === 0).length >= spacings.length * 0.8) {
        baseUnit = unit;
        break;
      }
    }
  }
  const padding: Record<string, string> = {};
  const margins: Record<string, string> = {};
  if (primaryEl) padding.button = style(primaryEl).padding;
  if (inputEl) padding.input = style(inputEl).padding;
  padding.body = bodyStyle.padding;
  margins.body = bodyStyle.margin;
  const para = [...doc.querySelectorAll('p')].find(visible);
  if (para) margins.paragraph = style(para).margin;
  if (firstHeading) margins.heading = style(firstHeading).margin;
  const spacing: Branding['spacing'] = { baseUnit, padding, margins };
  const radius = ranked(radii)[0];
  if (radius) spacing.borderRadius = radius;

  // --- images ---
  const imgs = [...doc.querySelectorAll('img')];
  const saysLogo = (el: DomElement | null): boolean => {
    for (let e = el, depth = 0; e && depth < 4; e = e.parentElement, depth++) {
      const own = depth === 0 ? `${e.getAttribute('alt') ?? ''} ${e.getAttribute('src') ?? ''} ` : '';
      if (/logo/i.test(own + labelOf(e))) return true;
    }
    return false;
  };
  const logoImg = imgs.find((i) => saysLogo(i)) ?? doc.querySelector('header img');
  const logo = logoImg ? abs(logoImg.getAttribute('src') ?? logoImg.currentSrc) : undefined;
  const favicon = abs(doc.querySelector('link[rel~="icon" i]')?.getAttribute('href'));
  const appleTouch = abs(doc.querySelector('link[rel~="apple-touch-icon" i]')?.getAttribute('href'));
  const ogImage = abs(
    doc.querySelector('meta[property="og:image" i], meta[name="og:image" i]')?.getAttribute('content'),
  );
  const images: Branding['images'] = {};
  if (logo) images.logo = logo;
  if (favicon) images.favicon = favicon;
  if (ogImage) images.ogImage = ogImage;
  const icons: Branding['icons'] = { svgCount: doc.querySelectorAll('svg').length };
  if (favicon) icons.favicon = favicon;
  if (appleTouch) icons.appleTouchIcon = appleTouch;

  const animations: Record<string, string> = {};
  const transition = ranked(transitions)[0];
  if (transition) {
    const [duration, easing] = transition.split('|');
    animations.transitionDuration = duration;
    animations.easing = easing;
  }
  const layout: Record<string, string> = {};
  if (maxWidth) layout.maxWidth = maxWidth.value;
  if (displayGrid || displayFlex) layout.display = displayGrid > displayFlex ? 'grid' : 'flex';

  const out: Branding = {
    colorScheme: luminance(background.slice(0, 7)) < 0.4 ? 'dark' : 'light',
    colors,
    fonts: ranked(families).map((family) => ({ family })),
    typography: { fontFamilies, fontSizes, fontWeights, lineHeights },
    spacing,
    components: {},
    icons,
    images,
    animations,
    layout,
    personality: {},
  };
  if (logo) out.logo = logo;
  if (buttonPrimary) out.components.buttonPrimary = buttonPrimary;
  if (buttonSecondary) out.components.buttonSecondary = buttonSecondary;
  if (input) out.components.input = input;
  return out;
}
