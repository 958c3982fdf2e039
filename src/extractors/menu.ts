// The `menu` format without a model: the spec's Menu shape from schema.org data.
//
// Menu: {isMenu, sections, confidence, merchant: {name, type}, currency, sourceUrl}. Section:
// {name, items, id, description}. Menu item: {name, id, description, images, price,
// availability, dietary, calories, optionGroups, identifiers: {merchantItemId}, url, sourceUrl}.
//
// Read from schema.org Menu (hasMenuSection, hasMenuItem), MenuSection (nested hasMenuSection,
// hasMenuItem) and MenuItem (offers → price/availability, suitableForDiet → dietary,
// nutrition.calories → calories, menuAddOn → optionGroups, image, url, identifier/sku →
// identifiers.merchantItemId), found in JSON-LD, microdata or RDFa, also inside a Restaurant /
// FoodEstablishment's hasMenu (which gives the merchant: its name and type). The spec's Section
// has no subsections: nested sections are flattened (a section's own items, then its subsections), named "Parent > Child";
// with several menus on a page each section name is prefixed by the menu's name
// ("Dinner > Mains"); items listed straight on a Menu form a section named after the menu.
// dietary: "https://schema.org/VeganDiet" → "vegan", "GlutenFreeDiet" → "gluten free".
// currency: the first priceCurrency among the items.
// confidence: 0.95 with a merchant and priced items, 0.9 with priced items, 0.7 with items
// without prices, 0 with none. No schema.org menu → {isMenu: false, sections: [], confidence: 0}.
// (The spec has no recipe shape: Recipe data is for the json format, not for menu.)
import { makePrice, availabilityOf, parseAmount, type Price } from './product.ts';
import {
  type Properties,
  type StructuredData,
  asList,
  asText,
  findByType,
  isObj,
  nodeTypes,
} from './structured-data.ts';

export interface MenuItem {
  name: string;
  id?: string;
  description?: string;
  images?: { url: string; alt?: string }[];
  price?: Price;
  availability?: { inStock: boolean; text: string };
  dietary?: string[];
  calories?: number;
  optionGroups?: Record<string, unknown>[];
  identifiers?: { merchantItemId: string };
  url?: string;
  sourceUrl?: string;
}

export interface MenuSection {
  name: string;
  items: MenuItem[];
  id?: string;
  description?: string;
}

export interface Menu {
  isMenu: boolean;
  sections: MenuSection[];
  confidence: number;
  merchant?: { name: string; type: string };
  currency?: string;
  sourceUrl?: string;
}

export interface MenuOptions {
  /** Page URL: sourceUrl of the menu and its items; base for relative URLs. */
  url?: string;
}

const MERCHANT_TYPES = [
  'Restaurant',
  'FoodEstablishment',
  'CafeOrCoffeeShop',
  'Bakery',
  'BarOrPub',
  'FastFoodRestaurant',
  'IceCreamShop',
  'Brewery',
  'Winery',
  'Distillery',
];

function resolve(u: string, base: string | undefined): string {
  try {
    return base ? new URL(u, base).href : u;
  } catch {
    return u;
  }
}

function dietOf(v: unknown): string[] {
  const out: string[] = [];
  for (const d of asList(v)) {
    const t = asText(d);
    if (!t) continue;
    const local = t
      .replace(/[/#]+$/, '')
      .split(/[/#:]/)
      .pop()!
      .replace(/Diet$/, '');
    const words = local
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase()
      .trim();
    if (words && !out.includes(words)) out.push(words);
  }
  return out;
}

function caloriesOf(v: unknown): number | undefined {
  const n = isObj(v) ? v.calories : undefined;
  const a = parseAmount(n);
  return a === undefined ? undefined : Math.round(a);
}

function addOnGroups(v: unknown, currency: string | undefined): Record<string, unknown>[] {
  const groups: Record<string, unknown>[] = [];
  for (const a of asList(v).filter(isObj)) {
    if (nodeTypes(a).includes('MenuSection')) {
      const options = asList(a.hasMenuItem)
        .filter(isObj)
        .map((i) => optionOf(i, currency));
      groups.push({ name: asText(a.name) ?? 'Add-ons', options });
    } else {
      const last = groups.find((g) => g.name === 'Add-ons');
      const opt = optionOf(a, currency);
      if (last) (last.options as unknown[]).push(opt);
      else groups.push({ name: 'Add-ons', options: [opt] });
    }
  }
  return groups;
}

function optionOf(i: Properties, currency: string | undefined): Record<string, unknown> {
  const o: Record<string, unknown> = { name: asText(i.name) ?? '' };
  const offer = asList(i.offers).filter(isObj)[0];
  const price = offer ? makePrice(parseAmount(offer.price), asText(offer.priceCurrency) ?? currency) : undefined;
  if (price) o.price = price;
  return o;
}

function itemOf(i: Properties, base: string | undefined): MenuItem | undefined {
  const name = asText(i.name);
  if (!name) return undefined;
  const item: MenuItem = { name };
  const id = typeof i['@id'] === 'string' ? i['@id'] : asText(i.identifier ?? i.sku);
  if (id) item.id = id;
  const description = asText(i.description);
  if (description) item.description = description;
  const images = asList(i.image)
    .map((x) => (typeof x === 'string' ? x : isObj(x) ? asText(x.contentUrl ?? x.url) : undefined))
    .filter((x): x is string => !!x)
    .map((u) => ({ url: resolve(u, base), alt: name }));
  if (images.length) item.images = images;
  const offer = asList(i.offers).filter(isObj)[0];
  const currency = offer ? asText(offer.priceCurrency) : undefined;
  const price = makePrice(parseAmount(offer?.price ?? offer?.lowPrice ?? i.price), currency);
  if (price) item.price = price;
  const av = offer ? availabilityOf(offer.availability) : undefined;
  if (av) item.availability = av;
  const dietary = dietOf(i.suitableForDiet);
  if (dietary.length) item.dietary = dietary;
  const calories = caloriesOf(i.nutrition);
  if (calories !== undefined) item.calories = calories;
  const groups = addOnGroups(i.menuAddOn, currency);
  if (groups.length) item.optionGroups = groups;
  const merchantItemId = asText(i.identifier ?? i.sku ?? i.productID);
  if (merchantItemId) item.identifiers = { merchantItemId };
  const url = asText(i.url);
  if (url) item.url = resolve(url, base);
  if (base) item.sourceUrl = base;
  return item;
}

function sectionsOf(menu: Properties, prefix: string, base: string | undefined): MenuSection[] {
  const out: MenuSection[] = [];
  const direct = asList(menu.hasMenuItem)
    .filter(isObj)
    .map((i) => itemOf(i, base))
    .filter((x): x is MenuItem => !!x);
  const name = asText(menu.name);
  const isSection = nodeTypes(menu).includes('MenuSection');
  if (direct.length || (isSection && name)) {
    const s: MenuSection = { name: prefix || name || 'Menu', items: direct };
    const id = typeof menu['@id'] === 'string' ? menu['@id'] : undefined;
    if (id) s.id = id;
    const description = asText(menu.description);
    if (description && isSection) s.description = description;
    if (direct.length || !asList(menu.hasMenuSection).length) out.push(s);
  }
  for (const sub of asList(menu.hasMenuSection).filter(isObj)) {
    const subName = asText(sub.name) ?? 'Section';
    out.push(...sectionsOf(sub, prefix ? `${prefix} > ${subName}` : subName, base));
  }
  return out;
}

export function extractMenu(data: StructuredData, opts: MenuOptions = {}): Menu {
  const base = opts.url;
  const merchants = findByType(data, ...MERCHANT_TYPES);
  let menus = findByType(data, 'Menu').map((m) => m.node);
  // A menu inside another menu's data is not a menu of its own; dedupe the same menu from several sources.
  const seenNames = new Set<string>();
  menus = menus.filter((m) => {
    const key = JSON.stringify([asText(m.name), asList(m.hasMenuSection).length, asList(m.hasMenuItem).length]);
    if (seenNames.has(key)) return false;
    seenNames.add(key);
    return true;
  });
  // Sections with no Menu around them.
  if (!menus.length) {
    const lone = findByType(data, 'MenuSection').map((s) => s.node);
    const nested = new Set<unknown>(lone.flatMap((s) => asList(s.hasMenuSection)));
    const top = lone.filter((s) => !nested.has(s));
    if (top.length) menus = [{ '@type': 'Menu', hasMenuSection: top }];
  }
  const sections: MenuSection[] = [];
  for (const m of menus) {
    const prefix = menus.length > 1 ? (asText(m.name) ?? '') : '';
    sections.push(...sectionsOf(m, prefix, base));
  }
  const items = sections.flatMap((s) => s.items);
  const out: Menu = { isMenu: items.length > 0, sections: items.length ? sections : [], confidence: 0 };
  const merchantNode = merchants.find((m) => m.node.hasMenu !== undefined)?.node ?? merchants[0]?.node;
  if (merchantNode && asText(merchantNode.name)) {
    out.merchant = {
      name: asText(merchantNode.name)!,
      type: nodeTypes(merchantNode).find((t) => MERCHANT_TYPES.includes(t)) ?? nodeTypes(merchantNode)[0],
    };
  }
  const currency =
    items.find((i) => i.price?.currency)?.price?.currency ??
    (merchantNode ? asText(merchantNode.currenciesAccepted)?.split(/[,\s]+/)[0] : undefined);
  if (currency && items.length) out.currency = currency;
  if (items.length) {
    const priced = items.some((i) => i.price);
    out.confidence = priced ? (out.merchant ? 0.95 : 0.9) : 0.7;
  }
  if (base) out.sourceUrl = base;
  return out;
}
