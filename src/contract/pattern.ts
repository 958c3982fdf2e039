// Callers' regexes on a linear-time engine. includePaths/excludePaths (and JSON Schema `pattern`s)
// run on every discovered URL or value on the main thread, so a backtracking engine would let one
// catastrophic pattern such as `(a+)+$` stall every team. RE2 (re2js, pure JS) matches in time
// linear in the input; what it cannot express (lookaround, backreferences) is refused up front.
import { RE2JS } from 're2js';

/** A compiled caller pattern: the one method the crawler and ajv use. */
export interface PatternMatcher {
  test(subject: string): boolean;
}

/**
 * Compiles `source` with RE2 semantics (unanchored search, like `RegExp.prototype.test`). Throws an
 * Error with a message for callers when the pattern is invalid or uses syntax RE2 cannot express.
 */
export function compileRe2(source: string, opts: { ignoreCase?: boolean } = {}): PatternMatcher {
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, opts.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    const detail = (err as Error).message.replace(/^error parsing regexp: /, '');
    if (validJs(source))
      throw new Error(
        `uses syntax the RE2 engine cannot express (RE2 has no lookahead, lookbehind or backreferences and caps repetition counts at 1000): ${detail}`,
      );
    throw new Error(`invalid regular expression: ${detail}`);
  }
  return { test: (subject) => re.matcher(subject).find() };
}

function validJs(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
