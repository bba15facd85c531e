/**
 * `confidence.probability` (README.md rule 17; docs/decisions.md "Crowd trust"): the chance that a
 * candidate is a real play, from the evidence the engine holds when it publishes or confirms it.
 *
 * The evidence (`Evidence`, computed by the engine):
 * - **votes**: the mean logit(accuracy) of the candidate's voices (weights.ts, one-coin
 *   Dawid–Skene): how far each is to be believed; their number is `voices`, apart, as voters who
 *   agree are not independent witnesses when they collude;
 * - **silence**: Σ log(1 − recall × F(t)) over the voices present on the game that did not vote,
 *   where F(t) is the chance that a reporter who saw a real play has reported it t ms after the
 *   first report (a log-normal delay) and recall the chance that this voter reports a play at
 *   all: a voter who always reports, silent long after everyone else, is strong evidence against
 *   the play; silence a second after the first report is none;
 * - **contested**: the share of the present voices' weight (by recall) that stayed silent, however
 *   recent the play: a few voices against a silent crowd;
 * - **newcomers**: 1 when official data has confirmed no play of any of its voices;
 * - **conflict**: log(1 + the voices of other candidates of the game within the window): the same
 *   moment reported for another team or other points (a slip, or a flipper);
 * - **confirm**: 1 for the confirmation, 0 for the provisional;
 * - **voices**: log of the voices;
 * - **liars**: log(1 + the scores official data contradicted among its voices' records).
 *
 * A logistic model maps them to a first estimate, then an isotonic (monotone) map to the
 * probability. Both were fitted against official truth (`node --import tsx bench/trust.ts --fit`,
 * on its training seed) and are measured on another seed by the same benchmark: expected
 * calibration error and Brier score (bench/RESULTS.md).
 */

export interface Evidence {
  votes: number;
  silence: number;
  contested: number;
  newcomers: number;
  conflict: number;
  confirm: number;
  voices: number;
  liars: number;
}

export const EVIDENCE_FEATURES = ['votes', 'silence', 'contested', 'newcomers', 'conflict', 'confirm', 'voices', 'liars'] as const satisfies readonly (keyof Evidence)[];

export interface Calibration {
  /** The logistic model: bias, then one coefficient per EVIDENCE_FEATURES entry. */
  weights: readonly number[];
  /** The isotonic map: the logistic estimate at each knot (ascending) and the probability there. */
  knots: readonly (readonly [number, number])[];
}

/** Fitted by `node --import tsx bench/trust.ts --fit` (seed 1); bench/RESULTS.md measures it on seed 2. */
export const CALIBRATION: Readonly<Calibration> = Object.freeze<Calibration>({
  weights: [0.8011, 0.5004, 0, -0.9902, -4.4651, -1.7625, 0.6523, 1.5854, -1.4778],
  knots: [
    [0.0066, 0.0187],
    [0.0355, 0.0774],
    [0.0807, 0.1484],
    [0.1385, 0.1529],
    [0.2119, 0.1766],
    [0.2992, 0.2222],
    [0.3807, 0.2812],
    [0.4796, 0.385],
    [0.577, 0.5107],
    [0.6581, 0.6668],
    [0.7517, 0.7681],
    [0.8096, 0.868],
    [0.8452, 0.91],
    [0.8777, 0.9106],
    [0.9021, 0.9285],
    [0.9283, 0.9408],
    [0.946, 0.9485],
    [0.9517, 0.9622],
    [0.9555, 0.9643],
    [0.9655, 0.9654],
    [0.9776, 0.978],
    [0.982, 0.9831],
    [0.9941, 0.9908],
    [0.9994, 0.9974],
  ],
});

/** Reporting delay model: log-normal, median 3 s from the play's first report, σ 0.9. */
export const DELAY_MEDIAN_MS = 3_000;
export const DELAY_SIGMA = 0.9;

/** Crowd probabilities stay inside (0, 1): only an official play is certain. */
const FLOOR = 0.001;
const CEILING = 0.999;

/** Abramowitz–Stegun 7.1.26: erf to 1.5e-7, plenty for a CDF rounded to 3 decimals. */
function erf(x: number): number {
  const s = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-a * a);
  return s * y;
}

/** F(t): the chance a reporter who will report a real play has done so `ms` after its first report. */
export function reportedBy(ms: number): number {
  if (ms <= 0) return 0;
  return 0.5 * (1 + erf(Math.log(ms / DELAY_MEDIAN_MS) / (DELAY_SIGMA * Math.SQRT2)));
}

/** log(1 − recall × F): one silent present voice's evidence, `reported` = F(t). */
export const silenceEvidence = (recall: number, reported: number): number => Math.log(Math.max(1e-9, 1 - recall * reported));

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** The logistic estimate before the isotonic map. */
export function logisticOf(e: Evidence, c: Calibration = CALIBRATION): number {
  let z = c.weights[0] ?? 0;
  EVIDENCE_FEATURES.forEach((f, i) => (z += (c.weights[i + 1] ?? 0) * e[f]));
  return sigmoid(z);
}

/** The isotonic map, linear between knots and flat beyond them. */
export function isotonic(x: number, knots: Calibration['knots']): number {
  if (knots.length === 0) return x;
  if (x <= knots[0][0]) return knots[0][1];
  for (let i = 1; i < knots.length; i++) {
    const [x1, y1] = knots[i];
    if (x <= x1) {
      const [x0, y0] = knots[i - 1];
      return x1 === x0 ? y1 : y0 + ((y1 - y0) * (x - x0)) / (x1 - x0);
    }
  }
  return knots[knots.length - 1][1];
}

/** The calibrated probability, rounded to 3 decimals, within [0.001, 0.999]. */
export function probabilityOf(e: Evidence, c: Calibration = CALIBRATION): number {
  const p = isotonic(logisticOf(e, c), c.knots);
  return Math.round(Math.min(CEILING, Math.max(FLOOR, p)) * 1000) / 1000;
}
