/**
 * Text from the service shown in a terminal's table cell. Some of it is chosen by whoever sends
 * it: a reporter's name is opaque (docs/reporters.md), so it may hold a line break, a terminal
 * escape sequence or a right-to-left override. Printed as is, it would break the table or drive
 * the operator's terminal; `printable` shows such characters as escapes instead. `cellWidth`
 * counts the columns a terminal gives the text (string-width), so a table of names in any script
 * stays aligned.
 */
import stringWidth from 'string-width';

/** Controls, format characters (bidi overrides, zero-width ones), lone surrogates, line and paragraph separators. */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => NAMED[c] ?? `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

/** Terminal columns of printable text (East Asian wide characters and emoji take two). */
export const cellWidth = (text: string): number => stringWidth(text);

export const padCell = (text: string, width: number): string => text + ' '.repeat(Math.max(0, width - cellWidth(text)));
export const padCellStart = (text: string, width: number): string => ' '.repeat(Math.max(0, width - cellWidth(text))) + text;
