import { readFileSync } from 'node:fs';
import { parseDocument } from 'htmlparser2';
import type { Document } from 'domhandler';
import { extractStructuredData, type StructuredData } from '../../src/extractors/structured-data.ts';

export const ctx = { origin: 'http://shop.test', mainOrigin: 'http://shop.test', blogOrigin: 'http://blog.shop.test' };

export function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

export function load(html: string, baseUrl = 'http://shop.test/page'): { doc: Document; sd: StructuredData } {
  const doc = parseDocument(html);
  return { doc, sd: extractStructuredData(doc, { baseUrl }) };
}
