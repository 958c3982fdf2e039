// word-extractor ships no types: the part Gleaner calls.
declare module 'word-extractor' {
  interface TextOptions {
    filterUnicode?: boolean;
    includeHeadersAndFooters?: boolean;
    includeBody?: boolean;
  }
  interface ExtractedDocument {
    getBody(options?: TextOptions): string;
    getFootnotes(options?: TextOptions): string;
    getEndnotes(options?: TextOptions): string;
    getHeaders(options?: TextOptions): string;
    getFooters(options?: TextOptions): string;
    getAnnotations(options?: TextOptions): string;
    getTextboxes(options?: TextOptions): string;
  }
  export default class WordExtractor {
    extract(source: Buffer | string): Promise<ExtractedDocument>;
  }
}
