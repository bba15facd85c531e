interface StatusView {
  status: string;
  generated_at: string;
  uptime_target: string;
  sports: { sport: string; status: string; live_games: number; events_last_5m: number; last_event_at: string | null; confirmation_p50_ms: number | null }[];
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A self-contained page (no scripts from elsewhere) that refreshes itself every 10 s. */
export function renderStatusPage(v: StatusView): string {
  const rows = v.sports
    .map(
      (s) => `<tr data-sport="${esc(s.sport)}"><td>${esc(s.sport)}</td><td class="${esc(s.status)}">${esc(s.status)}</td><td>${s.live_games}</td><td>${s.events_last_5m}</td><td>${s.confirmation_p50_ms ?? '—'}</td><td>${esc(s.last_event_at ?? '—')}</td></tr>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="10"><title>svc status</title>
<style>body{font:15px system-ui,sans-serif;margin:2rem;color:#222}table{border-collapse:collapse}td,th{padding:.4rem .8rem;border-bottom:1px solid #ddd;text-align:left}
.operational{color:#0a7d32}.idle{color:#777}.degraded{color:#b00020;font-weight:600}</style></head>
<body><h1>svc status: <span id="overall" class="${esc(v.status)}">${esc(v.status)}</span></h1>
<p>Uptime target ${esc(v.uptime_target)}. Feed health per sport, updated ${esc(v.generated_at)}. Basketball, tennis, golf and MMA feeds are synthetic.</p>
<table><thead><tr><th>sport</th><th>feed</th><th>live games</th><th>events (5 min)</th><th>confirmation p50 (ms)</th><th>last event</th></tr></thead><tbody>${rows}</tbody></table>
<p><a href="/v1/status">JSON</a> · <a href="/docs">API reference</a></p></body></html>`;
}
