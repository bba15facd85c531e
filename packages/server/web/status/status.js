// The public status page: draws /v1/status and refreshes it every 30 s without reloading.
import { duration, fill, h, percent, timeEl } from '/ui/format.js';

const REFRESH_MS = 30_000;
const LABEL = { soccer: 'Soccer', basketball: 'Basketball', tennis: 'Tennis', golf: 'Golf', mma: 'MMA' };
const CHANNEL_LABEL = { rest: 'REST API', stream: 'Stream', webhooks: 'Webhooks' };
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

let target = 0.999;
let lastGenerated = null;

/** Bar class for a day's figure. */
function barClass(uptime) {
  if (uptime === null) return 'none';
  if (uptime >= target) return 'ok';
  if (uptime >= 0.99) return 'warn';
  return 'bad';
}

const dayText = (sport, d) => `${LABEL[sport] ?? sport}, ${d.date}: ${d.uptime === null ? 'no samples' : `${percent(d.uptime)} up`}`;

const tip = () => $('bar-tip');

function showTip(bar) {
  const t = tip();
  t.textContent = bar.dataset.tip ?? '';
  t.hidden = false;
  const r = bar.getBoundingClientRect();
  const w = t.offsetWidth;
  const left = Math.min(Math.max(8, r.left + window.scrollX + r.width / 2 - w / 2), document.documentElement.clientWidth - w - 8);
  t.style.left = `${left}px`;
  t.style.top = `${r.top + window.scrollY - t.offsetHeight - 8}px`;
}

function hideTip() {
  tip().hidden = true;
}

function historyRow(s) {
  const bars = s.days.map((d) => h('span', { class: `bar ${barClass(d.uptime)}`, title: dayText(s.sport, d), 'data-tip': dayText(s.sport, d), 'data-date': d.date }));
  let selected = bars.length - 1;
  const strip = h(
    'div',
    {
      class: 'bars',
      tabindex: '0',
      role: 'group',
      'aria-label': `${LABEL[s.sport] ?? s.sport}: ${percent(s.uptime_90d)} uptime over 90 days. Left and right arrows read each day.`,
      onmouseover: (e) => {
        const bar = e.target instanceof HTMLElement && e.target.classList.contains('bar') ? e.target : null;
        if (bar) showTip(bar);
      },
      onmouseleave: hideTip,
      onblur: () => {
        hideTip();
        bars[selected]?.classList.remove('selected');
      },
      onfocus: () => {
        bars[selected].classList.add('selected');
        showTip(bars[selected]);
      },
      onkeydown: (e) => {
        const step = { ArrowLeft: -1, ArrowRight: 1, Home: -bars.length, End: bars.length }[e.key];
        if (step === undefined) return;
        e.preventDefault();
        bars[selected].classList.remove('selected');
        selected = Math.min(bars.length - 1, Math.max(0, selected + step));
        bars[selected].classList.add('selected');
        showTip(bars[selected]);
        $('live').textContent = bars[selected].dataset.tip ?? '';
      },
    },
    bars,
  );
  return h(
    'div',
    { class: 'history-row', 'data-sport': s.sport },
    h('div', { class: 'history-head' }, h('span', { class: 'name' }, LABEL[s.sport] ?? s.sport), h('span', { class: 'uptime', 'data-uptime': s.uptime_90d ?? '' }, `${percent(s.uptime_90d)} uptime`)),
    strip,
    h('div', { class: 'history-scale small muted', 'aria-hidden': 'true' }, h('span', {}, '90 days ago'), h('span', {}, 'today')),
  );
}

function incidentItem(i, now) {
  const end = i.resolved_at ? Date.parse(i.resolved_at) : now;
  const lasted = duration(end - Date.parse(i.started_at));
  const scope = i.sport ? LABEL[i.sport] ?? i.sport : CHANNEL_LABEL[i.channel] ?? i.channel;
  return h(
    'li',
    { class: `incident ${i.resolved_at ? 'resolved' : 'open'}`, 'data-incident': i.id },
    h('div', { class: 'incident-head' }, h('span', { class: `badge ${i.resolved_at ? 'ok' : 'bad'}` }, i.resolved_at ? 'Resolved' : 'Ongoing'), h('strong', {}, i.title)),
    h(
      'p',
      { class: 'small' },
      h('span', { class: 'tag' }, scope),
      ' Started ',
      timeEl(i.started_at, now),
      i.resolved_at ? [' · resolved ', timeEl(i.resolved_at, now), ` · lasted ${lasted}`] : ` · ongoing for ${lasted}`,
    ),
  );
}

function render(data) {
  // Times are relative to the server's clock, not the browser's: they read the same for everyone.
  const now = Date.parse(data.generated_at);
  target = Number.parseFloat(data.uptime_target) / 100 || 0.999;
  $('target').textContent = data.uptime_target;
  const overall = $('overall');
  overall.textContent = data.status;
  overall.className = `state ${data.status}`;
  const open = data.incidents.filter((i) => !i.resolved_at).length;
  $('summary').textContent =
    data.status === 'operational'
      ? 'Every feed and channel is working.'
      : `Something is degraded${open ? `: ${open} ongoing incident${open > 1 ? 's' : ''}` : ''}. Details below.`;

  fill(
    $('channels'),
    data.channels.map((c) =>
      h('li', { class: 'channel', 'data-channel': c.channel }, h('span', { class: 'name' }, CHANNEL_LABEL[c.channel] ?? c.channel), h('span', { class: `state ${c.status}` }, c.status)),
    ),
  );
  fill(
    $('sports'),
    data.sports.map((s) =>
      h(
        'tr',
        { 'data-sport': s.sport },
        h('td', { 'data-label': 'Sport' }, LABEL[s.sport] ?? s.sport),
        h('td', { 'data-label': 'Feed', class: s.status }, s.status),
        h('td', { 'data-label': 'Live games' }, s.live_games),
        h('td', { 'data-label': 'Events (5 min)' }, s.events_last_5m),
        h('td', { 'data-label': 'Confirmation p50' }, s.confirmation_p50_ms === null ? '—' : `${s.confirmation_p50_ms} ms`),
        h('td', { 'data-label': 'Last event' }, timeEl(s.last_event_at, now)),
      ),
    ),
  );
  const focused = document.activeElement?.closest?.('.history-row')?.getAttribute('data-sport');
  fill($('history'), data.sports.map(historyRow));
  if (focused) /** @type {HTMLElement | null} */ (document.querySelector(`.history-row[data-sport="${focused}"] .bars`))?.focus();
  fill($('incidents'), data.incidents.length ? data.incidents.map((i) => incidentItem(i, now)) : h('li', { class: 'muted' }, 'No incidents in the last 90 days.'));
  lastGenerated = data.generated_at;
  fill($('updated'), timeEl(data.generated_at, now));
}

async function refresh() {
  try {
    const res = await fetch('/v1/status', { headers: { accept: 'application/json' }, cache: 'no-store' });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    render((await res.json()).data);
    document.body.dataset.loaded = 'true';
  } catch (err) {
    $('summary').textContent = `Could not load the status (${err instanceof Error ? err.message : String(err)}); retrying.`;
  }
}

// The server put the current status in the page: draw it now, before the load event.
const initial = document.getElementById('initial-status');
if (initial?.textContent) {
  render(JSON.parse(initial.textContent).data);
  document.body.dataset.loaded = 'true';
} else {
  void refresh();
}
setInterval(() => {
  if (document.visibilityState === 'visible') void refresh();
}, REFRESH_MS);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && lastGenerated && Date.now() - Date.parse(lastGenerated) > REFRESH_MS) void refresh();
});
