import { asciiFold } from './slug.js';

/**
 * openfootball spells some nations differently from martj42's results.csv. These map the
 * openfootball spellings (and the `name_normalised` ones of its 2026 teams file) to the
 * results.csv spelling, which this importer treats as the canonical name of a nation.
 */
export const TEAM_NAME_ALIASES: Readonly<Record<string, string>> = {
  USA: 'United States',
  'Bosnia-Herzegovina': 'Bosnia and Herzegovina',
  'Bosnia & Herzegovina': 'Bosnia and Herzegovina',
  "Côte d'Ivoire": 'Ivory Coast',
  "Cote d'Ivoire": 'Ivory Coast',
  'Korea Republic': 'South Korea',
  'IR Iran': 'Iran',
  Türkiye: 'Turkey',
  Czechia: 'Czech Republic',
  'Cabo Verde': 'Cape Verde',
  'Congo DR': 'DR Congo',
};

export const canonicalTeamName = (name: string): string => TEAM_NAME_ALIASES[name] ?? name;

const FILLER = new Set(['AND', 'OF', 'THE', 'DE', 'DU', 'LA']);

/** Three-letter code candidates for a name, most natural first (initials, prefix, then letter triples). */
export function codeCandidates(name: string): string[] {
  const words = asciiFold(name)
    .toUpperCase()
    .split(/[^A-Z]+/)
    .filter(Boolean);
  const main = words.filter((w) => !FILLER.has(w));
  const letters = words.join('');
  const out: string[] = [];
  if (main.length >= 3) out.push(main.slice(0, 3).map((w) => w[0]).join(''));
  if (main.length === 2) out.push(main[0][0] + main[1].slice(0, 2), main[0].slice(0, 2) + main[1][0]);
  out.push(letters.slice(0, 3));
  for (let i = 1; i < letters.length; i++) for (let j = i + 1; j < letters.length; j++) out.push(letters[0] + letters[i] + letters[j]);
  return out.filter((c) => c.length === 3);
}

/** Hands out unique codes; call in a fixed order so the result is the same on every run. */
export class CodeAllocator {
  private readonly used = new Set<string>();
  reserve(code: string): void {
    this.used.add(code);
  }
  has(code: string): boolean {
    return this.used.has(code);
  }
  allocate(name: string): string {
    for (const c of codeCandidates(name)) {
      if (!this.used.has(c)) {
        this.used.add(c);
        return c;
      }
    }
    // Every in-order letter triple is taken: fall back to the first free code in AAA..ZZZ.
    for (let i = 0; i < 26 ** 3; i++) {
      const c = String.fromCharCode(65 + Math.floor(i / 676), 65 + (Math.floor(i / 26) % 26), 65 + (i % 26));
      if (!this.used.has(c)) {
        this.used.add(c);
        return c;
      }
    }
    throw new Error('no three-letter code left');
  }
}

/** external_ids: only string values (the schema says so); keys with no value are left out. */
export function externalIds(entries: Record<string, string | null | undefined>): string {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(entries)) if (v !== null && v !== undefined && v !== '') out[k] = v;
  return JSON.stringify(out);
}
