// The few parts of the third-party baselines (bench/package.json) that the benchmarks call, declared for the root
// typecheck: `npm test` runs on a clean clone without bench/node_modules and still checks bench/ against src/ and
// test/. bench/tsconfig.json leaves this file out and checks the same code against the real packages.
declare module 'turndown' {
  namespace TurndownService {
    type Plugin = (service: TurndownService) => void;
    interface Options {
      headingStyle?: 'setext' | 'atx';
      codeBlockStyle?: 'indented' | 'fenced';
    }
  }
  class TurndownService {
    constructor(options?: TurndownService.Options);
    use(plugins: TurndownService.Plugin | TurndownService.Plugin[]): this;
    turndown(html: string): string;
  }
  export = TurndownService;
}

declare module '@mozilla/readability' {
  export class Readability {
    constructor(document: unknown);
    parse(): { title?: string | null; content?: string | null } | null;
  }
}

declare module 'linkedom' {
  export class DOMParser {
    parseFromString(markup: string, type: 'text/html'): unknown;
  }
}

declare module 'exceljs' {
  namespace ExcelJS {
    type Buffer = ArrayBuffer;
    interface Cell {
      text: string;
    }
    interface Row {
      eachCell(callback: (cell: Cell) => void): void;
    }
    interface Worksheet {
      name: string;
      eachRow(callback: (row: Row) => void): void;
    }
    class Workbook {
      xlsx: { load(buffer: Buffer): Promise<Workbook> };
      eachSheet(callback: (sheet: Worksheet) => void): void;
    }
  }
  export = ExcelJS;
}

declare module '@crawlee/cheerio' {
  export const log: { setLevel(level: number): void; LEVELS: { WARNING: number } };
  export class Configuration {
    constructor(options: { persistStorage?: boolean; purgeOnStart?: boolean });
  }
  export interface CheerioCrawlingContext {
    request: { url: string; loadedUrl?: string };
    body: string | Buffer;
    enqueueLinks(options: { strategy: 'same-hostname' }): Promise<unknown>;
    pushData(data: Record<string, unknown>): Promise<void>;
  }
  export class CheerioCrawler {
    constructor(
      options: {
        maxRequestsPerCrawl?: number;
        autoscaledPoolOptions?: { desiredConcurrency?: number };
        requestHandler(context: CheerioCrawlingContext): Promise<void>;
      },
      config?: Configuration,
    );
    run(requests: string[]): Promise<{ requestsFailed: number }>;
  }
}
