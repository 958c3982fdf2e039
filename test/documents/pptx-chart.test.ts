// A chart on a PPTX slide: its title and data (series names, categories, values) as a table where it sits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDocument } from '../../src/documents/index.ts';
import { buildPptx } from '../fixtures/site/documents.ts';
import { readZip, writeZip } from '../fixtures/site/zip.ts';

const C = 'http://schemas.openxmlformats.org/drawingml/2006/chart';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

const strCache = (values: string[]) =>
  `<c:strRef><c:f>Sheet1!$A$2</c:f><c:strCache><c:ptCount val="${values.length}"/>${values.map((v, i) => `<c:pt idx="${i}"><c:v>${v}</c:v></c:pt>`).join('')}</c:strCache></c:strRef>`;
const numCache = (values: number[]) =>
  `<c:numRef><c:f>Sheet1!$B$2</c:f><c:numCache><c:formatCode>General</c:formatCode><c:ptCount val="${values.length}"/>${values.map((v, i) => `<c:pt idx="${i}"><c:v>${v}</c:v></c:pt>`).join('')}</c:numCache></c:numRef>`;
const series = (i: number, name: string, values: number[]) =>
  `<c:ser><c:idx val="${i}"/><c:order val="${i}"/><c:tx>${strCache([name])}</c:tx><c:cat>${strCache(['Q1', 'Q2', 'Q3'])}</c:cat><c:val>${numCache(values)}</c:val></c:ser>`;
const chartXml =
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><c:chartSpace xmlns:c="${C}" xmlns:a="${A}" xmlns:r="${R}"><c:chart>` +
  `<c:title><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>Crates by quarter</a:t></a:r></a:p></c:rich></c:tx></c:title>` +
  `<c:plotArea><c:barChart><c:barDir val="col"/>${series(0, 'North', [1200, 1350, 1240])}${series(1, 'South', [800, 910, 860])}</c:barChart></c:plotArea>` +
  '</c:chart></c:chartSpace>';
const frame =
  `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="12" name="Chart 1"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>` +
  `<p:xfrm><a:off x="0" y="0"/><a:ext cx="100" cy="100"/></p:xfrm><a:graphic><a:graphicData uri="${C}">` +
  `<c:chart xmlns:c="${C}" xmlns:r="${R}" r:id="rIdChart1"/></a:graphicData></a:graphic></p:graphicFrame>`;

function pptxWithChart(): Buffer {
  const entries = readZip(buildPptx()).map((e) => ({ name: e.name, data: e.data.toString('utf8') }));
  const get = (name: string) => entries.find((e) => e.name === name)!;
  get('ppt/slides/slide2.xml').data = get('ppt/slides/slide2.xml').data.replace('</p:spTree>', `${frame}</p:spTree>`);
  const rels = get('ppt/slides/_rels/slide2.xml.rels');
  rels.data = rels.data.replace(
    '</Relationships>',
    `<Relationship Id="rIdChart1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/chart" Target="../charts/chart1.xml"/></Relationships>`,
  );
  const types = get('[Content_Types].xml');
  types.data = types.data.replace(
    '</Types>',
    '<Override PartName="/ppt/charts/chart1.xml" ContentType="application/vnd.openxmlformats-officedocument.drawingml.chart+xml"/></Types>',
  );
  entries.push({ name: 'ppt/charts/chart1.xml', data: chartXml });
  return writeZip(entries);
}

test('a chart becomes its title and a table of its series by category', async () => {
  const doc = await parseDocument(pptxWithChart(), 'pptx');
  assert.match(
    doc.markdown,
    /## Slide 2[^\n]*\n[\s\S]*Chart: Crates by quarter\n\n\| \| North \| South \|\n\| --- \| --- \| --- \|\n\| Q1 \| 1200 \| 800 \|\n\| Q2 \| 1350 \| 910 \|\n\| Q3 \| 1240 \| 860 \|/,
  );
});
