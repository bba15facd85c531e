export interface Prerequisite {
  /** The Debian package's name, as a skip names it. */
  readonly name: string;
  readonly package: string;
  /** Which tests need it, for the closing lines of `npm test`. */
  readonly neededBy: string;
  readonly present: () => boolean;
}
export declare const CHROMIUM: string;
export declare const PYTHON: string;
export declare const PREREQUISITES: readonly Prerequisite[];
export declare function isPresent(name: string): boolean;
export declare function installCommand(names: readonly string[]): string;
export declare function missing(names: readonly string[]): { names: string[]; note: string } | null;
export declare function required(): boolean;
export declare function requirePackages(ctx: { skip(note?: string): never }, names: readonly string[]): void;
