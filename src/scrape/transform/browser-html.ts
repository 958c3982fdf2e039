// Where htmlparser2 reads HTML differently from a browser, in ways that lose a page's text: the HTML is rewritten
// so both parsers (transformHtml's DOM, the crawler's link scan) read what a browser shows. Cheap when nothing
// matches: each rule first looks for its marker with includes().

/** The HTML as a browser would tokenize it, where htmlparser2 would swallow the rest of the page. */
export function asBrowserReads(html: string): string {
  return noscriptIframes(bogusCdata(html));
}

// Outside foreign content a browser reads `<![CDATA[` as a bogus comment ending at the next `>`;
// htmlparser2 runs it to `]]>`, swallowing the page when none follows. Script text keeps its own
// (`//<![CDATA[`).
const HTML_CDATA = /(?<!\/\/\s*|\/\*\s*)<!\[CDATA\[/g;
function bogusCdata(html: string): string {
  return html.includes('<![CDATA[') ? html.replace(HTML_CDATA, '<!--[CDATA[-->') : html;
}

// A browser that runs scripts reads a <noscript>'s content as text, so a tracking pixel's unclosed
// `<iframe ... />` in it ends with it; htmlparser2 reads an iframe's content as raw text to `</iframe>`,
// swallowing the rest of the page when none follows. Such an iframe is closed where it opens.
const OPEN_IFRAME = /<iframe\b([^>]*?)\/?>/gi;
function noscriptIframes(html: string): string {
  let out = '';
  let copied = 0;
  // Plain indexOf scans: most pages have a <noscript> (a tracking pixel), few an unclosed iframe in one.
  for (let at = html.indexOf('<noscript'); at >= 0; at = html.indexOf('<noscript', at + 9)) {
    const end = html.indexOf('</noscript', at);
    if (end < 0) break;
    const inner = html.slice(at, end);
    const iframe = inner.indexOf('<iframe');
    if (iframe >= 0 && inner.indexOf('</iframe', iframe) < 0) {
      out += html.slice(copied, at) + inner.replace(OPEN_IFRAME, '<iframe$1></iframe>');
      copied = end;
    }
    at = end;
  }
  return copied ? out + html.slice(copied) : html;
}
