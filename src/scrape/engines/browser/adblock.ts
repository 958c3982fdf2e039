// blockAds: network and cosmetic filtering with @ghostery/adblocker's engine (EasyList syntax).
// The filter lists are files: the small curated list shipped in ./filters/base.txt plus any
// extra lists the operator configures (no list is downloaded at run time). Network rules decide
// per request (the browser engine aborts matches); cosmetic rules become one stylesheet that
// the page adopts (document.adoptedStyleSheets), so it hides banners in the rendering without
// appearing in the serialised HTML.
import { readFile } from 'node:fs/promises';
import { FiltersEngine, Request } from '@ghostery/adblocker';
import type { PlaywrightRequestType } from '@ghostery/adblocker';

export const BASE_FILTER_LIST = new URL('./filters/base.txt', import.meta.url).pathname;

export class AdBlocker {
  readonly #engine: FiltersEngine;
  readonly #css = new Map<string, string>();
  #generic: string | undefined;
  /** Number of rules parsed (network + cosmetic), for logs. */
  readonly ruleCount: number;

  private constructor(engine: FiltersEngine) {
    this.#engine = engine;
    this.ruleCount = engine.getFilters().networkFilters.length + engine.getFilters().cosmeticFilters.length;
  }

  /** Parses the base list and the given extra list files (EasyList syntax). */
  static async load(extraLists: readonly string[] = []): Promise<AdBlocker> {
    const texts = await Promise.all([BASE_FILTER_LIST, ...extraLists].map((p) => readFile(p, 'utf8')));
    return AdBlocker.fromText(texts.join('\n'));
  }

  static fromText(text: string): AdBlocker {
    return new AdBlocker(
      FiltersEngine.parse(text, { loadNetworkFilters: true, loadCosmeticFilters: true, enableHtmlFiltering: false }),
    );
  }

  /** True when a request of `type` for `url`, made by a document at `sourceUrl`, matches a blocking rule. */
  shouldBlock(url: string, type: PlaywrightRequestType | 'sub_frame', sourceUrl: string | undefined): boolean {
    if (!url.startsWith('http')) return false;
    const { match } = this.#engine.match(Request.fromRawDetails({ url, sourceUrl, type }));
    return match;
  }

  /**
   * The hiding stylesheet (CSS text, maybe empty) for pages of this URL's host: every generic
   * hiding rule of the lists plus the rules written for this host. One CSS rule per selector, so
   * a selector the browser does not support only loses itself.
   */
  cosmeticCss(url: string): string {
    let hostname: string;
    try {
      hostname = new URL(url).hostname;
    } catch {
      return '';
    }
    let css = this.#css.get(hostname);
    if (css === undefined) {
      const { styles } = this.#engine.getCosmeticsFilters({
        url,
        hostname,
        domain: hostname,
        getBaseRules: false,
        getRulesFromHostname: true,
        getRulesFromDOM: false,
        getInjectionRules: false,
        getExtendedRules: false,
      });
      css = this.#genericCss + styles;
      if (this.#css.size > 1000) this.#css.clear();
      this.#css.set(hostname, css);
    }
    return css;
  }

  // Generic (any-site) hiding rules. The engine indexes simple class and id rules for lookup
  // from the DOM's classes and ids; without a DOM round trip we apply all of them up front.
  get #genericCss(): string {
    if (this.#generic === undefined) {
      this.#generic = this.#engine
        .getFilters()
        .cosmeticFilters.filter(
          (f) =>
            !f.hasHostnameConstraint() &&
            !f.isUnhide() &&
            !f.isScriptInject() &&
            !f.isExtended() &&
            !f.isHtmlFiltering(),
        )
        .map((f) => `${f.getSelector()} { display: none !important; }\n`)
        .join('');
    }
    return this.#generic;
  }
}
