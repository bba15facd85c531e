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
 * - **liars**: log(1 + the scores official data contradicted among its voices' records);
 * - **alone**: 1 when no voice outside the candidate is present on the game (nobody who could
 *   have contradicted it: silent, or reporting the moment otherwise).
 *
 * A logistic model maps them to a first estimate, then an isotonic (monotone) map to the
 * probability. Both were fitted against official truth (`node --import tsx bench/trust.ts --fit`,
 * on its training seed) and are measured on another seed by the same benchmark: expected
 * calibration error and Brier score (bench/RESULTS.md).
 *
 * **Unchecked claims stay below 0.9** (`UNCHECKED_CEILING`): while `alone` is 1, its voices agreeing
 * is all the evidence there is, and reporters lying together (sleepers with records as good as the
 * crowd's, on a game nobody else has reported on yet) give exactly that. In the benchmark 13 % of
 * such confirmations were inventions, so the ceiling costs the calibration little.
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
  alone: number;
}

export const EVIDENCE_FEATURES = ['votes', 'silence', 'contested', 'newcomers', 'conflict', 'confirm', 'voices', 'liars', 'alone'] as const satisfies readonly (keyof Evidence)[];

export interface Calibration {
  /** The logistic model: bias, then one coefficient per EVIDENCE_FEATURES entry. */
  weights: readonly number[];
  /** The isotonic map: the logistic estimate at each knot (ascending) and the probability there. */
  knots: readonly (readonly [number, number])[];
}

/** Fitted by `node --import tsx bench/trust.ts --fit` (seed 1); bench/RESULTS.md measures it on seed 2. */
export const CALIBRATION: Readonly<Calibration> = Object.freeze<Calibration>({
  weights: [1.9759, 0.4618, 0, -2.1251, -5.3367, -1.8794, 0.7922, 1.2074, -1.4404, -1.5827],
  knots: [
    [0.0038, 0.0108],
    [0.0275, 0.0509],
    [0.0667, 0.1226],
    [0.1073, 0.1606],
    [0.1829, 0.1809],
    [0.2613, 0.2069],
    [0.3375, 0.2585],
    [0.4391, 0.3569],
    [0.5498, 0.4861],
    [0.6515, 0.6356],
    [0.7293, 0.7365],
    [0.7839, 0.8522],
    [0.8332, 0.8853],
    [0.8608, 0.925],
    [0.9077, 0.9358],
    [0.9368, 0.9412],
    [0.9452, 0.946],
    [0.9541, 0.9541],
    [0.9596, 0.9696],
    [0.9652, 0.9762],
    [0.9706, 0.9813],
    [0.9881, 0.986],
    [0.9967, 0.991],
    [0.9989, 0.9939],
  ],
});

/** Reporting delay model: log-normal, median 3 s from the play's first report, σ 0.9. */
export const DELAY_MEDIAN_MS = 3_000;
export const DELAY_SIGMA = 0.9;

/** Crowd probabilities stay inside (0, 1): only an official play is certain. */
const FLOOR = 0.001;
const CEILING = 0.999;
/** The most a candidate nobody else present could have contradicted may carry. */
export const UNCHECKED_CEILING = 0.899;

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

/** The calibrated probability, rounded to 3 decimals, within [0.001, 0.999], at most 0.899 while unchecked. */
export function probabilityOf(e: Evidence, c: Calibration = CALIBRATION): number {
  const p = isotonic(logisticOf(e, c), c.knots);
  const ceiling = e.alone > 0 ? UNCHECKED_CEILING : CEILING;
  return Math.round(Math.min(ceiling, Math.max(FLOOR, p)) * 1000) / 1000;
}
