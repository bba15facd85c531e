// A live scoreboard: prints every scoring event as it happens, with the running score.
//
//   npm start                                   # in the repository root: svc on :8080, prints a key
//   SVC_API_KEY=svc_test_… npm run example:scoreboard -w @svc/client
//
// SPORTS (default soccer,basketball) filters; MAX_EVENTS stops after that many events.
import { Svc, type WireEvent } from '@svc/client';

const svc = new Svc();
const sports = (process.env.SPORTS ?? 'soccer,basketball').split(',');
const maxEvents = Number(process.env.MAX_EVENTS ?? Infinity);
const scores = new Map<string, Map<string, number>>();

function apply(ev: WireEvent): string {
  const game = scores.get(ev.game_id) ?? new Map<string, number>();
  scores.set(ev.game_id, game);
  // Provisional points count at once; a retraction takes them back; a confirmation of an
  // already counted provisional changes nothing.
  if (ev.type === 'score' && (ev.tier === 'provisional' || ev.provisional_id === undefined)) game.set(ev.team, (game.get(ev.team) ?? 0) + ev.points);
  if (ev.type === 'score_retracted') game.set(ev.team, (game.get(ev.team) ?? 0) - ev.points);
  return [...game].map(([team, pts]) => `${team} ${pts}`).join(' – ');
}

const stream = svc.stream(
  { sport: sports },
  { onSubscribed: (f) => console.log(`subscribed to ${f.sports.join(', ') || 'everything'}${f.recovered ? ' (resumed)' : ''}`) },
);
process.once('SIGINT', () => stream.close());

let n = 0;
for await (const ev of stream) {
  const what =
    ev.type === 'status'
      ? `now ${ev.status} (was ${ev.previous_status})${ev.reason ? `: ${ev.reason}` : ''}`
      : ev.type === 'score_retracted'
        ? `retracted ${ev.retracted_id}`
        : `${ev.team} +${ev.points} (${ev.tier}, ${ev.confidence.reporters} reporters)`;
  console.log(`${ev.ts}  ${ev.game_id}  ${what}  |  ${apply(ev)}`);
  if (++n >= maxEvents) break;
}
stream.close();
