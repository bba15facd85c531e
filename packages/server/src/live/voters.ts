import type { ReportInput } from '@svc/schema';
import { voterId } from '../domain/consensus/voters.js';

/**
 * Who a report speaks for (docs/consensus.md "Threat model"): the key that sent it and, when the
 * key names one, the end user it reports for (`reporter`, opaque to svc). The pair is the voter
 * whose vote, repeats and track record the consensus counts; a key without `reporter` is its own
 * voice, as before.
 */
export interface Speaker {
  voter: string;
  keyId: string;
  /** null: the key's own voice. */
  reporter: string | null;
}

export function speakerOf(keyId: string, r: Pick<ReportInput, 'reporter'>): Speaker {
  const reporter = r.reporter ?? null;
  return { voter: voterId(keyId, reporter), keyId, reporter };
}

/** The engine's view of a speaker: a named reporter gives its key, a key's own voice does not. */
export const engineVoter = (s: Speaker): { reporterId: string; keyId?: string } => (s.reporter === null ? { reporterId: s.voter } : { reporterId: s.voter, keyId: s.keyId });
