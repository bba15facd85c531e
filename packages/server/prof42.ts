import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvEncoder, EXPORT_COLUMNS, ParquetEncoder } from './src/export/formats.js';
const N = 200_000;
const lines: Buffer[] = [];
for (let s = 0; s < N; s += 1000) {
  let text = '';
  for (let i = s; i < s + 1000; i++) text += JSON.stringify({ id: `evt_${String(i + 1).padStart(12, '0')}`, type: 'score', tier: 'confirmed', game_id: `basketball_${1 + (i >> 8)}`, sport: 'basketball', league: 'xbl', team: `team:xbl:T${i % 30}`, event_type: 'two_pointer', points: 2, clock: i % 7 === 0 ? null : `${i % 12}:00`, ts: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(), confidence: { agreement: (i % 5) / 4, reporters: 3, latency_ms: i % 5000 }, schema: 'svc.event.v1' }) + '\n';
  lines.push(Buffer.from(text));
}
const sink = () => new Writable({ write(_c, _e, d) { d(); } });
for (const name of (process.env.ORDER ?? 'parquet,csv,parse-only,parquet').split(',')) {
  const t0 = performance.now();
  if (name === 'parse-only') { for (const b of lines) for (const l of b.toString().split('\n')) if (l) JSON.parse(l); }
  else await pipeline(Readable.from(lines, { objectMode: false }), name === 'csv' ? new CsvEncoder(EXPORT_COLUMNS.events) : new ParquetEncoder(EXPORT_COLUMNS.events), sink());
  console.log(name, Math.round(N / ((performance.now() - t0) / 1000)), 'rows/s');
}
