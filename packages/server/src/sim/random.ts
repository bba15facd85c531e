import { hashSeed, Prng } from '../archive/prng.js';

/** Uniform in [0, 1). Injected so a seeded simulator plans the same games on every run. */
export type Random = () => number;

export { hashSeed };

/** A seeded source (the archive's mulberry32), for tests and reproducible demos. */
export function seededRandom(seed: number): Random {
  const prng = new Prng(seed);
  return () => prng.next();
}

export const uniform = (r: Random, min: number, max: number): number => min + (max - min) * r();

export const chance = (r: Random, p: number): boolean => r() < p;

export const pickIndex = (r: Random, n: number): number => Math.min(n - 1, Math.floor(r() * n));

/** Standard normal by Box–Muller (1 - r() avoids log(0)). */
export function normal(r: Random): number {
  const u = 1 - r();
  const v = r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Log-normal with the given median: most values near it, a long tail of slow ones. */
export const logNormal = (r: Random, median: number, sigma: number): number => median * Math.exp(sigma * normal(r));

/** Exponential gap with the given mean (a Poisson process's inter-arrival time). */
export const exponential = (r: Random, mean: number): number => -mean * Math.log(1 - r());
