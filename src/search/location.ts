// `location` ("Germany", "Berlin,Germany", "San Francisco,California,United States") to the ISO
// 3166-1 alpha-2 code a backend understands: the last comma part that names a country (in English,
// as Intl knows the names), or that is a code itself.
let byName: Map<string, string> | undefined;

function countryNames(): Map<string, string> {
  if (byName) return byName;
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const map = new Map<string, string>();
  const A = 65;
  for (let i = 0; i < 26; i++)
    for (let j = 0; j < 26; j++) {
      const code = String.fromCharCode(A + i, A + j);
      const name = names.of(code);
      // First code wins: France is FR, not FX (Metropolitan France, an exceptional reservation).
      if (name && !map.has(name.toLowerCase())) map.set(name.toLowerCase(), code);
    }
  // Common names Intl spells otherwise.
  map.set('usa', 'US').set('united states of america', 'US').set('uk', 'GB').set('england', 'GB');
  return (byName = map);
}

export function countryOfLocation(location: string | undefined): string | undefined {
  if (!location) return undefined;
  const parts = location
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean)
    .reverse();
  const names = countryNames();
  for (const part of parts) {
    const code =
      names.get(part) ??
      (/^[a-z]{2}$/.test(part) && [...names.values()].includes(part.toUpperCase()) ? part.toUpperCase() : undefined);
    if (code) return code;
  }
  return undefined;
}
