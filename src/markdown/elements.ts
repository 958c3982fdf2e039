// How the HTML→Markdown converter treats each element: its kind (a lookup by tag name, built once),
// and the attribute checks made on every element (hidden, data: URLs).

// Element kinds.
export const K_INLINE = 0; // transparent: its children are rendered in place
export const K_DROP = 1;
export const K_BLOCK = 2;
export const K_HEADING = 3;
export const K_LIST = 4;
export const K_LI = 5;
export const K_QUOTE = 6;
export const K_PRE = 7;
export const K_HR = 8;
export const K_BR = 9;
export const K_TABLE = 10;
export const K_STRONG = 11;
export const K_EM = 12;
export const K_DEL = 13;
export const K_A = 14;
export const K_CODE = 15;
export const K_IMG = 16;
export const K_INPUT = 17;
export const K_FIGURE = 18;
export const K_DT = 19;
export const K_DIALOG = 20;

export const KINDS = new Map<string, number>();
function kind(k: number, names: string): void {
  for (const n of names.split(' ')) KINDS.set(n, k);
}
kind(
  K_DROP,
  'script style noscript template svg iframe object embed canvas head meta link title base select button textarea option optgroup datalist video audio source track map area param frameset frame noframes applet portal wbr',
);
kind(
  K_BLOCK,
  'address article aside body center details dl dd fieldset figcaption footer form header hgroup html legend main nav p section summary caption tbody thead tfoot tr td th search',
);
kind(K_HEADING, 'h1 h2 h3 h4 h5 h6');
kind(K_LIST, 'ul ol menu dir');
kind(K_LI, 'li');
kind(K_QUOTE, 'blockquote');
kind(K_PRE, 'pre listing xmp plaintext');
kind(K_HR, 'hr');
kind(K_BR, 'br');
kind(K_TABLE, 'table');
kind(K_STRONG, 'strong b');
kind(K_EM, 'em i');
kind(K_DEL, 'del s strike');
kind(K_A, 'a');
kind(K_CODE, 'code kbd samp tt');
kind(K_IMG, 'img');
kind(K_INPUT, 'input');
kind(K_FIGURE, 'figure');
kind(K_DT, 'dt');
kind(K_DIALOG, 'dialog');
KINDS.set('div', K_BLOCK);

const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i;

export function isHidden(a: Record<string, string>): boolean {
  if (a.hidden !== undefined || a['aria-hidden'] === 'true') return true;
  const style = a.style;
  return (
    style !== undefined && (style.indexOf('none') >= 0 || style.indexOf('hidden') >= 0) && HIDDEN_STYLE.test(style)
  );
}

export function isDataUrl(s: string): boolean {
  return s.length > 5 && (s.charCodeAt(0) | 32) === 100 && s.slice(0, 5).toLowerCase() === 'data:';
}
