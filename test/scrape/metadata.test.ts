// extractMetadata: Firecrawl's field names and fallbacks, every other meta tag under its own key
// (arrays when repeated), URL resolution, entity decoding and the context fields.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDocument } from 'htmlparser2';
import { cleanDocument } from '../../src/scrape/transform/clean.ts';
import { extractMetadata } from '../../src/scrape/transform/metadata.ts';

const ctx = {
  sourceURL: 'https://example.com/start',
  url: 'https://www.example.com/blog/post?id=1',
  statusCode: 200,
  contentType: 'text/html; charset=utf-8',
};
const meta = (html: string, c: Partial<typeof ctx> = {}) => extractMetadata(parseDocument(html), { ...ctx, ...c });

const full = `<!doctype html><html lang="en-GB"><head>
<title>  The   Post Title &amp; More | Example  </title>
<meta name="description" content="  A description.  ">
<meta name="keywords" content="alpha, beta">
<meta name="robots" content="index, follow">
<meta property="og:title" content="OG Title">
<meta property="og:description" content="OG description">
<meta property="og:url" content="/blog/post">
<meta property="og:image" content="../img/cover.jpg">
<meta property="og:image" content="https://cdn.example.com/second.jpg">
<meta property="og:site_name" content="Example">
<meta property="og:locale" content="en_GB">
<meta property="og:locale:alternate" content="fr_FR">
<meta property="og:locale:alternate" content="de_DE">
<meta property="article:published_time" content="2026-11-20T10:00:00Z">
<meta property="article:modified_time" content="2026-11-21T11:00:00Z">
<meta property="article:section" content="Science">
<meta property="article:tag" content="space">
<meta property="article:tag" content="rockets">
<meta name="twitter:card" content="summary_large_image">
<meta name="DC.title" content="Dublin Core Title">
<meta name="dc.title" content="lower-case dc">
<meta name="dcterms.created" content="2026-01-01">
<meta http-equiv="X-UA-Compatible" content="IE=edge">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width">
<meta name="empty" content="   ">
<meta name="title" content="meta title loses to &lt;title&gt;">
<meta name="double" content="Tom &amp;amp; Jerry">
<link rel="shortcut icon" href="/static/fav.ico">
<link rel="canonical" href="post">
<link rel="stylesheet" href="a.css">
</head><body><svg><title>svg title</title></svg><h1>Heading</h1><p itemprop="x">text</p><meta itemprop="datePublished" content="2026-11-20"></body></html>`;

describe('extractMetadata', () => {
  test('Firecrawl fields, raw keys, arrays, resolution and context', () => {
    const m = meta(full);
    assert.equal(m.title, 'The Post Title & More | Example');
    assert.equal(m.description, 'A description.');
    assert.equal(m.language, 'en-GB');
    assert.equal(m.keywords, 'alpha, beta');
    assert.equal(m.robots, 'index, follow');
    assert.equal(m.ogTitle, 'OG Title');
    assert.equal(m.ogDescription, 'OG description');
    assert.equal(m.ogUrl, 'https://www.example.com/blog/post');
    assert.equal(m.ogImage, 'https://www.example.com/img/cover.jpg');
    assert.equal(m.ogSiteName, 'Example');
    assert.equal(m.ogLocale, 'en_GB');
    assert.deepEqual(m.ogLocaleAlternate, ['fr_FR', 'de_DE']);
    assert.equal(m.publishedTime, '2026-11-20T10:00:00Z');
    assert.equal(m.modifiedTime, '2026-11-21T11:00:00Z');
    assert.equal(m.favicon, 'https://www.example.com/static/fav.ico');
    assert.equal(m.canonicalUrl, 'https://www.example.com/blog/post');
    // Every meta under its original key; repeated keys are arrays (raw values, unresolved).
    assert.equal(m['twitter:card'], 'summary_large_image');
    assert.equal(m['article:section'], 'Science');
    assert.deepEqual(m['article:tag'], ['space', 'rockets']);
    assert.deepEqual(m['og:image'], ['../img/cover.jpg', 'https://cdn.example.com/second.jpg']);
    assert.equal(m['DC.title'], 'Dublin Core Title');
    assert.equal(m['dc.title'], 'lower-case dc');
    assert.equal(m['X-UA-Compatible'], 'IE=edge');
    assert.equal(m.viewport, 'width=device-width');
    assert.equal(m.datePublished, '2026-11-20');
    assert.equal(m.double, 'Tom & Jerry');
    assert.equal(m.empty, undefined);
    // Firecrawl's camelCase aliases.
    assert.equal(m.articleSection, 'Science');
    assert.equal(m.articleTag, 'space');
    assert.equal(m.dcTermsCreated, '2026-01-01');
    // Context.
    assert.equal(m.sourceURL, ctx.sourceURL);
    assert.equal(m.url, ctx.url);
    assert.equal(m.statusCode, 200);
    assert.equal(m.contentType, 'text/html; charset=utf-8');
  });

  test('fallbacks: og:title then h1 for the title, og:description, content-language, /favicon.ico', () => {
    const m = meta(
      `<html><head><meta property="og:title" content="From OG"><meta property="og:description" content="OG desc"><meta http-equiv="content-language" content="de-AT, en"></head><body><h1>From H1</h1></body></html>`,
    );
    assert.equal(m.title, 'From OG');
    assert.equal(m.description, 'OG desc');
    assert.equal(m.language, 'de-AT');
    assert.equal(m.favicon, 'https://www.example.com/favicon.ico');
    assert.deepEqual(m.ogLocaleAlternate, []);
    assert.equal(m.canonicalUrl, undefined);
    const h = meta('<body><h1> Only  <b>heading</b> </h1></body>', { contentType: undefined });
    assert.equal(h.title, 'Only heading');
    assert.equal('contentType' in h, false);
    assert.equal(h.language, undefined);
  });

  test('meta keys that are Object.prototype names are ordinary keys', () => {
    const m = meta(
      '<meta name="constructor" content="c"><meta name="toString" content="t"><meta name="__proto__" content="p">',
    );
    assert.equal(m.constructor, 'c');
    assert.equal(m.toString, 't');
    assert.equal(Object.getPrototypeOf(m), Object.prototype);
  });

  test('<base href> is the base for relative URLs', () => {
    const m = meta(
      '<head><base href="https://static.example.net/assets/"><link rel="icon" href="icon.png"><meta property="og:image" content="og.png"></head>',
    );
    assert.equal(m.favicon, 'https://static.example.net/assets/icon.png');
    assert.equal(m.ogImage, 'https://static.example.net/assets/og.png');
  });

  test('must run before cleaning: the cleaner drops <head>', () => {
    const doc = parseDocument(full);
    const before = extractMetadata(doc, ctx);
    cleanDocument(doc, { onlyMainContent: true });
    const after = extractMetadata(doc, ctx);
    assert.equal(before.description, 'A description.');
    assert.equal(after.description, undefined);
  });
});
