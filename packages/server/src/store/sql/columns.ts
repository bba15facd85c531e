/** A boolean column as both engines store it (0/1 integers), read back. */
export const bool = (n: number): boolean => n === 1;
