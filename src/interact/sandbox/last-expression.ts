// Caller's node code → the body of an async function that returns the value of its last expression
// statement (what a REPL shows): `const x = 1; x + 1` returns 2, `await page.title()` its title.
// acorn parses it as a script that may await and return at top level; only the last statement of
// the top level is rewritten, so every other byte runs as written.
import { parse, type Node, type Program } from 'acorn';

export class CodeSyntaxError extends Error {}

export function toAsyncFunctionBody(code: string): string {
  let program: Program;
  try {
    program = parse(code, {
      ecmaVersion: 'latest',
      sourceType: 'script',
      allowAwaitOutsideFunction: true,
      allowReturnOutsideFunction: true,
      allowHashBang: true,
    });
  } catch (err) {
    throw new CodeSyntaxError(`SyntaxError: ${(err as Error).message}`);
  }
  const last: Node | undefined = program.body.at(-1);
  if (last?.type !== 'ExpressionStatement') return code;
  const expression = (last as Node & { expression: Node }).expression;
  // A line break before the closing paren keeps a trailing line comment from swallowing it.
  return `${code.slice(0, last.start)}return (${code.slice(expression.start, expression.end)}\n);${code.slice(last.end)}`;
}
