// The layer rule (eslint/layers.js, rule layers/order): an import under src/ that runs up the layer order, or
// across folders of one rank, fails; downward and same-folder imports pass; the repo's eslint.config.js applies
// it to src/ and leaves test/ and bench/ alone.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ESLint, RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import layers from '../../eslint/layers.js';

const root = path.resolve(import.meta.dirname, '../..');
const at = (file: string) => path.join(root, file);

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });

tester.run('layers/order', layers.rules.order, {
  valid: [
    { filename: at('src/contract/scrape.ts'), code: "import { errorCodes } from '../errors.ts';" },
    { filename: at('src/scrape/plan.ts'), code: "import { openDb } from '../store/db.ts';" },
    { filename: at('src/scrape/engines/browser.ts'), code: "import { plan } from '../plan.ts';" },
    { filename: at('src/api/routes/scrape.ts'), code: "import type { Config } from '../../config.ts';" },
    { filename: at('src/service.ts'), code: "import { buildApp } from './app.ts';" },
    { filename: at('src/server.ts'), code: "const { startService } = await import('./service.ts');" },
    { filename: at('src/crawl/crawler.ts'), code: "export { JobQueue } from '../jobs/queue.ts';" },
    { filename: at('src/store/db.ts'), code: "import { request } from 'undici'; import './db-helpers.ts';" },
    { filename: at('test/store/db.test.ts'), code: "import { startService } from '../../src/service.ts';" },
    { filename: at('bench/scrape.bench.ts'), code: "import { planScrape } from '../src/scrape/plan.ts';" },
  ],
  invalid: [
    {
      filename: at('src/store/db.ts'),
      code: "import { planScrape } from '../scrape/plan.ts';",
      errors: [
        {
          message:
            'src/store/db.ts (layer 1 leaves) imports src/scrape/plan.ts (layer 3 scrape): the layer rule allows ' +
            'imports only to a lower layer or within the same top folder of src/ (eslint/layers.js); a lower layer ' +
            'that needs to call up takes a callback or an interface.',
        },
      ],
    },
    {
      filename: at('src/jobs/queue.ts'),
      code: "import type { Crawler } from '../crawl/crawler.ts';",
      errors: [{ messageId: 'upward' }],
    },
    { filename: at('src/jobs/queue.ts'), code: "export * from '../service.ts';", errors: [{ messageId: 'upward' }] },
    {
      filename: at('src/jobs/queue.ts'),
      code: "export { x } from '../api/auth.ts';",
      errors: [{ messageId: 'upward' }],
    },
    { filename: at('src/scrape/plan.ts'), code: "await import('../crawl/url.ts');", errors: [{ messageId: 'upward' }] },
    {
      filename: at('src/scrape/plan.ts'),
      code: "let q: import('../jobs/queue.ts').JobQueue;",
      errors: [{ messageId: 'upward' }],
    },
    // Same rank, another folder: two leaves do not import each other.
    {
      filename: at('src/net/fetch.ts'),
      code: "import { Db } from '../store/db.ts';",
      errors: [{ messageId: 'upward' }],
    },
    {
      filename: at('src/errors.ts'),
      code: "import { jobEndpoints } from './contract/common.ts';",
      errors: [{ messageId: 'upward' }],
    },
    { filename: at('src/app.ts'), code: "import { main } from './server.ts';", errors: [{ messageId: 'upward' }] },
    {
      filename: at('src/newthing/a.ts'),
      code: "import { x } from '../store/db.ts';",
      errors: [{ messageId: 'unlisted' }],
    },
    {
      filename: at('src/api/auth.ts'),
      code: "import { x } from '../newthing/a.ts';",
      errors: [{ messageId: 'unlisted' }],
    },
  ],
});

describe("the repo's eslint.config.js", () => {
  const eslint = new ESLint({ cwd: root });
  const layerErrors = async (file: string, code: string) =>
    (await eslint.lintText(code, { filePath: at(file) }))[0].messages.filter((m) => m.ruleId === 'layers/order');

  it('checks the layer order under src/', async () => {
    const errors = await layerErrors('src/store/x.ts', "export { planScrape } from '../scrape/plan.ts';\n");
    assert.equal(errors.length, 1);
    assert.match(errors[0].message, /layer 1 leaves.*layer 3 scrape/);
  });

  it('leaves test/ and bench/ alone', async () => {
    assert.deepEqual(await layerErrors('test/x.test.ts', "export { startService } from '../src/service.ts';\n"), []);
    assert.deepEqual(await layerErrors('bench/x.bench.ts', "export { startService } from '../src/service.ts';\n"), []);
  });
});
