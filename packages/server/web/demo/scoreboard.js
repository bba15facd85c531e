// The demo scoreboard (docs/stream.md "A scoreboard in a public page"): the page holds no API
// key. It asks its own back end for a stream token (here svc's demo endpoint, POST /demo/token;
// on your site, a route of your server that calls POST /v1/stream/tokens with your key), then
// opens the stream as server-sent events with ?token=. EventSource reconnects by itself and
// resumes with Last-Event-ID; when the token expires the server ends the stream with a `close`
// frame (token_expired), and the page fetches a new token and resumes with since=<last id>.

const board = document.getElementById('board');
const ticker = document.getElementById('ticker');
const state = document.getElementById('link-state');
const lastEvent = document.getElementById('last-event');
const errorBox = document.getElementById('board-error');

/** Every event id this page has shown, so nothing is shown twice across reconnections. */
const seen = new Set();
let lastId = null;
let source = null;
/** Games by id, as the back end last described them. */
const games = new Map();

const code = (entityId) => entityId.split(':').pop();

function setState(text, kind) {
  state.textContent = text;
  state.className = `badge ${kind}`;
}

function showError(message) {
  errorBox.textContent = message;
  errorBox.hidden = !message;
}

function row(game) {
  const home = game.competitors.find((c) => c.role === 'home') ?? game.competitors[0];
  const away = game.competitors.find((c) => c.role === 'away') ?? game.competitors[1];
  const tr = document.createElement('tr');
  tr.id = `game-${game.id}`;
  tr.dataset.game = game.id;
  const cells = [`${game.league.toUpperCase()} · ${game.start_time.slice(11, 16)} UTC`, home ? code(home.entity_id) : '', `${home?.score ?? 0} – ${away?.score ?? 0}`, away ? code(away.entity_id) : '', game.status];
  for (const text of cells) {
    const td = document.createElement('td');
    td.textContent = text;
    tr.append(td);
  }
  tr.cells[2].className = 'score';
  return tr;
}

function render() {
  board.replaceChildren(...[...games.values()].map(row));
  if (games.size === 0) {
    const tr = document.createElement('tr');
    const td = document.createElement('td');
    td.colSpan = 5;
    td.textContent = 'No games today.';
    tr.append(td);
    board.append(tr);
  }
}

/** The board's scores are the official ones: re-read a game's row after its confirmed events. */
let refreshTimer = null;
async function refreshBoard() {
  const res = await fetch('/demo/games', { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`The board could not be loaded (HTTP ${res.status}).`);
  const { data } = await res.json();
  games.clear();
  for (const g of data) games.set(g.id, g);
  render();
}

function onEvent(message) {
  const ev = JSON.parse(message.data);
  if (seen.has(ev.id)) return;
  seen.add(ev.id);
  lastId = ev.id;
  lastEvent.textContent = `last event ${ev.id}`;
  const li = document.createElement('li');
  li.dataset.event = ev.id;
  li.dataset.game = ev.game_id;
  const what = ev.type === 'score' ? `${ev.team} +${ev.points}` : ev.type === 'score_retracted' ? `${ev.team} +${ev.points} retracted` : `${ev.type}${ev.status ? ` ${ev.status}` : ''}`;
  li.textContent = `${ev.ts.slice(11, 19)} · ${ev.game_id} · ${what} `;
  const badge = document.createElement('span');
  badge.className = `badge ${ev.tier === 'confirmed' ? 'ok' : 'warn'}`;
  badge.textContent = ev.tier ?? '';
  li.append(badge);
  ticker.prepend(li);
  while (ticker.children.length > 50) ticker.lastElementChild.remove();
  if (ev.tier === 'confirmed') {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => refreshBoard().catch((e) => showError(e.message)), 300);
  }
}

async function token() {
  const res = await fetch('/demo/token', { method: 'POST' });
  if (!res.ok) throw new Error(`No stream token (HTTP ${res.status}): the demo runs in the sandbox only.`);
  return (await res.json()).data.token;
}

async function connect() {
  source?.close();
  const t = await token();
  const params = new URLSearchParams({ token: t });
  if (lastId) params.set('since', lastId);
  source = new EventSource(`/v1/stream?${params}`);
  source.addEventListener('open', () => setState('live', 'ok'));
  source.addEventListener('subscribed', () => showError(''));
  for (const type of ['score', 'score_retracted', 'status']) source.addEventListener(type, onEvent);
  source.addEventListener('close', (m) => {
    const frame = JSON.parse(m.data);
    source.close();
    // An expired token is renewed; the stream resumes after the last event shown.
    if (frame.reason === 'token_expired' || frame.reason === 'server shutting down') connect().catch(fail);
    else fail(new Error(`The stream ended: ${frame.reason}.`));
  });
  source.addEventListener('error', (m) => {
    if (typeof m.data === 'string') return; // an error frame: the stream goes on
    // EventSource retries by itself while readyState is CONNECTING; CLOSED means it was refused.
    if (source.readyState === EventSource.CLOSED) {
      setState('reconnecting…', 'warn');
      setTimeout(() => connect().catch(fail), 2000);
    } else setState('reconnecting…', 'warn');
  });
}

function fail(e) {
  setState('offline', 'bad');
  showError(e.message);
}

refreshBoard()
  .then(connect)
  .catch(fail);
