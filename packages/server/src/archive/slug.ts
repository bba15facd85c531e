/** Strips accents (NFD + combining marks) and the letters NFD cannot split. */
export function asciiFold(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .replace(/[øØ]/g, (c) => (c === 'ø' ? 'o' : 'O'))
    .replace(/[łŁ]/g, (c) => (c === 'ł' ? 'l' : 'L'))
    .replace(/[đĐ]/g, (c) => (c === 'đ' ? 'd' : 'D'))
    .replace(/[æÆ]/g, (c) => (c === 'æ' ? 'ae' : 'AE'))
    .replace(/ı/g, 'i');
}

/** Lowercase ASCII, apostrophes dropped ("Levi's" → "levis"), other non-alphanumerics → "-". */
export function slugify(s: string): string {
  return asciiFold(s)
    .toLowerCase()
    .replace(/['’`]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** Lowercase ASCII words separated by single spaces, for fuzzy name comparisons. */
export function normWords(s: string): string {
  return asciiFold(s)
    .toLowerCase()
    .replace(/['’`]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}
