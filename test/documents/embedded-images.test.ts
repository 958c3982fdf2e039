// Pictures in DOCX and PPTX: `![alt](their path in the package)` by default, data: URIs when the caller keeps
// base64 images (removeBase64Images: false, passed as embedImages).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDocument } from '../../src/documents/index.ts';
import { buildPng, buildPptx, buildRichDocx } from '../fixtures/site/documents.ts';
import { readZip, writeZip } from '../fixtures/site/zip.ts';

test('DOCX: the logo as its path, or as a data: URI of its bytes', async () => {
  const plain = await parseDocument(buildRichDocx(), 'docx');
  assert.match(plain.markdown, /!\[Gleaner logo\]\(media\/image1\.png\)/);
  const embedded = await parseDocument(buildRichDocx(), 'docx', { embedImages: true });
  const png = buildPng(4, 4).toString('base64');
  assert.ok(embedded.markdown.includes(`![Gleaner logo](data:image/png;base64,${png})`), embedded.markdown);
});

test('PPTX: a picture on a slide, the same way', async () => {
  const entries = readZip(buildPptx()).map((e) => ({ name: e.name, data: e.data as Buffer | string }));
  const slide = entries.find((e) => e.name === 'ppt/slides/slide1.xml')!;
  const pic =
    '<p:pic><p:nvPicPr><p:cNvPr id="20" name="Picture 1" descr="Depot map"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>' +
    '<p:blipFill><a:blip r:embed="rIdPic1"/></p:blipFill><p:spPr/></p:pic>';
  slide.data = slide.data.toString().replace('</p:spTree>', `${pic}</p:spTree>`);
  const rels = entries.find((e) => e.name === 'ppt/slides/_rels/slide1.xml.rels')!;
  rels.data = rels.data
    .toString()
    .replace(
      '</Relationships>',
      '<Relationship Id="rIdPic1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="../media/map.png"/></Relationships>',
    );
  entries.push({ name: 'ppt/media/map.png', data: buildPng(8, 8) });
  const bytes = writeZip(entries);
  assert.match((await parseDocument(bytes, 'pptx')).markdown, /!\[Depot map\]\(\.\.\/media\/map\.png\)/);
  const embedded = await parseDocument(bytes, 'pptx', { embedImages: true });
  assert.ok(embedded.markdown.includes(`![Depot map](data:image/png;base64,${buildPng(8, 8).toString('base64')})`));
});
