/**
 * Text from the service shown in a terminal's table cell. Some of it is chosen by whoever sends
 * it: a reporter's name is opaque (docs/reporters.md), so it may hold a line break, a terminal
 * escape sequence or a right-to-left override. Printed as is, it would break the table or drive
 * the operator's terminal; `printable` shows such characters as escapes instead. `cellWidth`
 * counts the columns a terminal gives the text, so a table of names in any script stays aligned.
 */

/** Controls, format characters (bidi overrides, zero-width ones), lone surrogates, line and paragraph separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => NAMED[c] ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

/** East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth.txt, W and F, grouped by block): two columns each. */
const WIDE: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], [0x2e80, 0x303e], [0x3041, 0x33ff], [0x3400, 0x4dbf], [0x4e00, 0x9fff], [0xa000, 0xa4cf],
  [0xa960, 0xa97f], [0xac00, 0xd7a3], [0xf900, 0xfaff], [0xfe10, 0xfe19], [0xfe30, 0xfe6f], [0xff00, 0xff60],
  [0xffe0, 0xffe6], [0x16fe0, 0x18cff], [0x1b000, 0x1b2ff], [0x1f200, 0x1f251], [0x20000, 0x3fffd],
];
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

function wide(codePoint: number): boolean {
  return WIDE.some(([lo, hi]) => codePoint >= lo && codePoint <= hi);
}

/** Terminal columns of printable text: a grapheme is two when wide or an emoji shown as a picture, else one (a lone combining mark, none). */
export function cellWidth(text: string): number {
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const first = segment.codePointAt(0) ?? 0;
    if (/^\p{M}+$/u.test(segment)) continue;
    width += wide(first) || /\p{Emoji_Presentation}/u.test(segment) || segment.includes('\uFE0F') ? 2 : 1;
  }
  return width;
}

export const padCell = (text: string, width: number): string => text + ' '.repeat(Math.max(0, width - cellWidth(text)));
export const padCellStart = (text: string, width: number): string => ' '.repeat(Math.max(0, width - cellWidth(text))) + text;
