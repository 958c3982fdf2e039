// The branding format through the real browser engine: the styled fixture page (/brand) gives back
// exactly the colours, fonts, sizes, button and input styles and images its CSS and markup set; the
// dark variant is a dark colour scheme; the styles are read after the actions ran; an unstyled page
// reports the browser's defaults without inventing brand colours; a fetch that does not ask gets none.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  BrowserEngine,
  type BrowserFetchRequest,
  chromiumAvailable,
  chromiumExecutable,
} from '../../src/scrape/engines/browser.ts';
import type { Branding } from '../../src/scrape/formats/branding.ts';
import { type FixtureSite, brandStyle, startFixtureSite } from '../fixtures/site/index.ts';

const haveChromium = chromiumAvailable(chromiumExecutable());
let site: FixtureSite;
let engine: BrowserEngine;

const req = (path: string, extra: Partial<BrowserFetchRequest> = {}): BrowserFetchRequest => ({
  url: site.url(path),
  timeoutMs: 20_000,
  skipTlsVerification: true,
  mobile: false,
  branding: true,
  ...extra,
});

async function branding(path: string, extra: Partial<BrowserFetchRequest> = {}): Promise<Branding> {
  const r = await engine.fetch(req(path, extra));
  assert.ok(r.branding, 'branding returned');
  return r.branding;
}

describe('branding from computed styles', { skip: haveChromium ? false : 'Chromium is not installed' }, () => {
  before(async () => {
    site = await startFixtureSite();
    engine = new BrowserEngine({ allowPrivateNetwork: true, maxPages: 2 });
    await engine.warm();
  });
  after(async () => {
    await engine.close();
    await site.close();
  });

  test('the colours, fonts and components the CSS sets come back exactly', async () => {
    const s = brandStyle;
    const b = await branding('/brand');
    assert.equal(b.colorScheme, 'light');
    assert.deepEqual(b.colors, {
      primary: s.buttonPrimary.background,
      secondary: s.link,
      accent: s.heading,
      background: s.background,
      textPrimary: s.text,
      textSecondary: s.muted,
      link: s.link,
      success: s.success,
      warning: s.warning,
      error: s.error,
    });
    assert.deepEqual(b.fonts.slice(0, 3), [{ family: s.bodyFont }, { family: s.headingFont }, { family: s.codeFont }]);
    assert.deepEqual(b.typography, {
      fontFamilies: { primary: s.bodyFont, heading: s.headingFont, code: s.codeFont },
      fontSizes: { h1: s.h1Size, h2: s.h2Size, h3: s.h3Size, body: s.bodySize },
      fontWeights: { regular: 400, bold: 700 },
      lineHeights: { heading: s.headingLineHeight, body: s.bodyLineHeight },
    });
    assert.deepEqual(b.components, {
      buttonPrimary: s.buttonPrimary,
      buttonSecondary: s.buttonSecondary,
      input: { ...s.input, padding: '8px' },
    });
    assert.equal(b.spacing.baseUnit, 8);
    assert.equal(b.spacing.borderRadius, '8px');
    assert.equal(b.spacing.padding.button, '8px 16px');
    assert.equal(b.spacing.margins.paragraph, '0px 0px 16px');
    assert.deepEqual(b.images, {
      logo: site.url(s.logoPath),
      favicon: site.url(s.faviconPath),
      ogImage: site.url(s.ogImagePath),
    });
    assert.equal(b.logo, site.url(s.logoPath));
    assert.equal(b.icons.favicon, site.url(s.faviconPath));
    assert.deepEqual(b.animations, { transitionDuration: '0.2s', easing: 'ease-in-out' });
    assert.equal(b.layout.maxWidth, '960px');
    assert.deepEqual(b.personality, {});
  });

  test('a dark page is a dark colour scheme with its own background and text', async () => {
    const b = await branding('/brand?dark=1');
    assert.equal(b.colorScheme, 'dark');
    assert.equal(b.colors.background, brandStyle.darkBackground);
    assert.equal(b.colors.textPrimary, brandStyle.darkText);
    assert.equal(b.colors.primary, brandStyle.buttonPrimary.background);
  });

  test('styles are read from the rendered page after the actions', async () => {
    const b = await branding('/brand', {
      actions: [
        {
          type: 'executeJavascript',
          script:
            "document.body.style.backgroundColor = 'rgb(16, 32, 48)'; document.querySelector('.btn-primary').style.backgroundColor = 'oklch(0.7 0.15 150)'",
        },
      ],
    });
    assert.equal(b.colors.background, '#102030');
    assert.equal(b.colorScheme, 'dark');
    assert.match(b.components.buttonPrimary?.background ?? '', /^#[0-9A-F]{6}$/, 'oklch converted to hex');
    assert.notEqual(b.components.buttonPrimary?.background, brandStyle.buttonPrimary.background);
  });

  test('an unstyled page: browser defaults, no invented brand colours, logo found by its name', async () => {
    const b = await branding('/articles/1');
    assert.equal(b.colors.background, '#FFFFFF');
    assert.equal(b.colors.textPrimary, '#000000');
    assert.equal(b.colors.link, '#0000EE');
    assert.equal(b.colors.success, undefined);
    assert.equal(b.components.buttonPrimary, undefined, "Chromium's default button is not a brand button");
    assert.match(b.images.logo ?? '', /\/images\/logo\.png$/);
  });

  test('a fetch that does not ask for branding gets none', async () => {
    const r = await engine.fetch(req('/brand', { branding: false }));
    assert.equal(r.branding, undefined);
  });
});
