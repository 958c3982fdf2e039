// English terms for scoring text without a model: light suffix stemming and stopword lists, shared
// by BM25 question answering (./bm25.ts) and the extractive summary (src/scrape/formats/summary.ts).

/** Function words that never carry a question's or a passage's meaning. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by for from has have how i if in into is it its of on or that the their ' +
    'there these this those to was were what when where which who whom why will with you your do does ' +
    'did can could should would may might about over than then them they we our us he she his her him ' +
    'not no so such very just also any all each more most other some'
  ).split(' '),
);

/** STOPWORDS plus the words prose is full of (contractions, pronoun forms, common verbs): for scoring sentences. */
export const PROSE_STOPWORDS: ReadonlySet<string> = new Set([
  ...STOPWORDS,
  ...(
    "above after again against almost although always am among another anyone anything aren't around " +
    "became because become been before being below between both can't cannot couldn't didn't doesn't " +
    "doing don't done down during either else enough etc even ever every few further get gets got had " +
    "hadn't hasn't haven't having he'd he'll he's here here's hers herself himself how's however i'd " +
    "i'll i'm i've isn't it's itself least less let's like made make many me much must mustn't my myself " +
    'near neither never new nor now off often once one only others otherwise ought ours ourselves out ' +
    "own per perhaps quite rather really same several shall shan't she'd she'll she's shouldn't since " +
    "something still that's theirs themselves there's they'd they'll they're they've though through thus " +
    "too toward towards under until up upon use used using via wasn't we'd we'll we're we've well " +
    "weren't what's whatever when's where's whether while who's whose why's within without won't " +
    "wouldn't yes yet you'd you'll you're you've yours yourself yourselves said says say"
  ).split(' '),
]);

/**
 * Light stemming of a lower-cased word: plurals (ies→y, sses/xes/zes/ches/shes→…, s unless ss/us/is),
 * then ing / ed (not eed), then a doubled final consonant left by them (running → run). Words of
 * three letters or fewer and words with digits are kept.
 */
export function stem(w: string): string {
  if (w.length <= 3 || /\d/.test(w)) return w;
  let s = w;
  if (s.endsWith('ies') && s.length > 4) s = s.slice(0, -3) + 'y';
  else if (/(?:ss|x|z|ch|sh)es$/.test(s) && s.length > 4) s = s.slice(0, -2);
  else if (s.endsWith('s') && !/(?:ss|us|is)$/.test(s)) s = s.slice(0, -1);
  let cut = false;
  if (s.endsWith('ing') && s.length > 5) {
    s = s.slice(0, -3);
    cut = true;
  } else if (s.endsWith('ed') && s.length > 4 && !s.endsWith('eed')) {
    s = s.slice(0, -2);
    cut = true;
  }
  if (cut && /([^aeiouls])\1$/.test(s)) s = s.slice(0, -1);
  return s;
}
