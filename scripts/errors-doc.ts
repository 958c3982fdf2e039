// docs/errors.md, the reference of every error code, generated from the registry in src/errors.ts:
// `npm run docs:errors` writes it; test/errors.test.ts fails when the file and the registry disagree.
import { writeFileSync } from 'node:fs';
import { errorCodeGroups } from '../src/errors.ts';

export const errorsDocPath = new URL('../docs/errors.md', import.meta.url);

export function renderErrorsDoc(): string {
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from the registry in src/errors.ts by `npm run docs:errors`: edit the registry, not this file. -->',
    '',
    'A request that fails is answered with `{"success": false, "code": "...", "error": "...", "details": ...}`:',
    '`code` is one of the codes below (stable, for programs), `error` a message for people, and `details`',
    '(validation errors only) names each invalid field. A crawl or batch scrape lists its failed pages with',
    'the same codes (GET /v2/crawl/{id}/errors). A status of "-" means the code is never an HTTP status:',
    'its meaning says where it appears.',
  ];
  for (const group of errorCodeGroups) {
    lines.push('', `## ${group.title}`, '', '| Code | HTTP status | Meaning |', '| --- | --- | --- |');
    for (const [code, spec] of Object.entries(group.codes)) {
      lines.push(`| \`${code}\` | ${spec.status ?? '-'} | ${spec.meaning.replaceAll('|', '\\|')} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

if (import.meta.main) writeFileSync(errorsDocPath, renderErrorsDoc());
