// ESLint plugin with one rule, layers/order: a module under src/ may import only from a lower layer of the table
// below or from its own top folder of src/ (a same-rank import across folders is an error too). Every relative
// import, export-from, dynamic import() and import('…') type counts, type-only ones included.
// src/errors.ts is the bottom of the ground floor: every module may import it, and it imports nothing of src/.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The layer order, lowest first: the one place it is written down. A member ending in '/' is a top folder of
 * src/, any other a file at src/'s top level; top-level files not listed are composition root (rank 9).
 */
const LAYERS = [
  { rank: 0, name: 'ground', members: ['errors.ts', 'config.ts', 'version.ts', 'contract/'] },
  { rank: 1, name: 'leaves', members: ['net/', 'store/', 'markdown/'] },
  { rank: 2, name: 'leaves', members: ['billing/', 'llm/', 'documents/', 'extractors/'] },
  { rank: 3, name: 'scrape', members: ['scrape/'] },
  { rank: 4, name: 'jobs', members: ['jobs/'] },
  { rank: 5, name: 'crawl', members: ['crawl/'] },
  { rank: 6, name: 'capabilities', members: ['extract/', 'monitor/', 'interact/', 'search/'] },
  { rank: 7, name: 'agent', members: ['agent/'] },
  { rank: 8, name: 'api', members: ['api/'] },
  { rank: 9, name: 'composition root', members: ['app.ts', 'service.ts'] },
  { rank: 10, name: 'entry points', members: ['server.ts', 'worker.ts', 'cli.ts', 'cli-client.ts', 'cli-commands.ts'] },
];
const COMPOSITION_ROOT = 9;
/** The bottom of the ground floor: every module may import it, and it imports nothing of src/. */
const ERRORS = 'src/errors.ts';

const srcDir = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * Where a file under src/ sits: its rank, the layer's name, its group (its top folder, or the top-level files of
 * its layer, which share src/ itself) and its path from the repo root. Null outside src/; rank null for a top
 * folder not in the table.
 */
function placeOf(file) {
  const rel = path.relative(srcDir, file).split(path.sep).join('/');
  if (rel === '' || rel === '..' || rel.startsWith('../') || path.isAbsolute(rel)) return null;
  const slash = rel.indexOf('/');
  const member = slash === -1 ? rel : rel.slice(0, slash + 1);
  const layer = LAYERS.find((l) => l.members.includes(member));
  const repoPath = `src/${rel}`;
  if (slash !== -1) return { rank: layer?.rank ?? null, name: layer?.name ?? null, group: member, file: repoPath };
  const top = layer ?? LAYERS.find((l) => l.rank === COMPOSITION_ROOT);
  return { rank: top.rank, name: top.name, group: `top-level files of layer ${top.rank}`, file: repoPath };
}

/** The string a module specifier node holds, or null when it is not a plain string. */
function specifierOf(node) {
  if (!node) return null;
  if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0].value.cooked;
  if (node.type === 'TSLiteralType') return specifierOf(node.literal);
  return null;
}

/** @type {import('eslint').Rule.RuleModule} */
const order = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports under src/ go to a lower layer or stay in their own top folder (eslint/layers.js).' },
    schema: [],
    messages: {
      upward:
        '{{from}} (layer {{fromRank}} {{fromName}}) imports {{to}} (layer {{toRank}} {{toName}}): the layer rule ' +
        'allows imports only to a lower layer or within the same top folder of src/ (eslint/layers.js); ' +
        'a lower layer that needs to call up takes a callback or an interface.',
      unlisted: '{{folder}} is not in the layer table: give it a rank in eslint/layers.js.',
    },
  },
  create(context) {
    const from = placeOf(context.filename);
    if (!from) return {};
    const dir = path.dirname(context.filename);

    function check(sourceNode) {
      const specifier = specifierOf(sourceNode);
      if (!specifier || !specifier.startsWith('.')) return;
      const to = placeOf(path.resolve(dir, specifier));
      if (!to || from.rank === null) return;
      if (from.file !== ERRORS && (to.file === ERRORS || to.group === from.group)) return;
      if (to.rank === null) {
        context.report({ node: sourceNode, messageId: 'unlisted', data: { folder: `src/${to.group}` } });
        return;
      }
      if (to.rank < from.rank) return;
      context.report({
        node: sourceNode,
        messageId: 'upward',
        data: {
          from: from.file,
          fromRank: String(from.rank),
          fromName: from.name,
          to: to.file,
          toRank: String(to.rank),
          toName: to.name,
        },
      });
    }

    return {
      Program(node) {
        if (from.rank === null) context.report({ node, messageId: 'unlisted', data: { folder: `src/${from.group}` } });
      },
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.argument),
      TSExternalModuleReference: (node) => check(node.expression),
    };
  },
};

export default { meta: { name: 'layers' }, rules: { order } };
