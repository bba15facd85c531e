// The svc dashboard: every action is a call to the public REST API with the signed-in key, so
// it can do exactly what the key may do and see exactly what the key may see.
import { api, ApiError, onRateLimit, session } from '/ui/api.js';
import { fill, h, timeEl } from '/ui/format.js';
import { $, clearError, confirmDialog, showError, toast } from '/ui/page.js';

const SPORTS = ['soccer', 'basketball', 'tennis', 'golf', 'mma'];
const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'disabled'];
const PAGE = 20;

/** @type {{me: any, rate: {limit: number, remaining: number, reset: number} | null}} */
const state = { me: null, rate: null };

// ---------- small UI pieces ----------

/** Runs an action from a button: disables it meanwhile, shows the API's error if it fails. */
async function act(button, fn, errorBox) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    clearError(errorBox);
    await fn();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return signOut('Your key is no longer valid; sign in again.');
    showError(err, errorBox);
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/** A modal confirmation; resolves true on confirm. Focus returns to the opener (the dialog does that). */
/** A secret shown once, with a copy button. */
function secretBox(label, secret, note) {
  const code = h('code', { class: 'secret-value' }, secret);
  const copy = h('button', { type: 'button', class: 'copy' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secret);
      copy.textContent = 'Copied';
    } catch {
      // No clipboard (older browser, no permission): select it for a manual copy.
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      copy.textContent = 'Selected: press Ctrl+C';
    }
  });
  return h('div', { class: 'secret', role: 'status' }, h('strong', {}, label), code, copy, h('p', { class: 'small muted' }, note));
}

function sportChecks(name, selected) {
  const allowed = state.me?.sports ?? SPORTS;
  return allowed.map((s) =>
    h('label', {}, h('input', { type: 'checkbox', name, value: s, checked: selected?.includes(s) ?? false }), s),
  );
}

const checkedSports = (form, name) => [...form.querySelectorAll(`input[name="${name}"]:checked`)].map((i) => /** @type {HTMLInputElement} */ (i).value);

// ---------- account ----------

function renderAccount() {
  const me = state.me;
  const rate = state.rate;
  const unmetered = me.plan === 'internal';
  const usage = rate
    ? unmetered
      ? 'unmetered'
      : `${rate.limit - rate.remaining} of ${rate.limit} used this minute (resets in ${rate.reset} s)`
    : `${me.rate_limit.limit} per ${me.rate_limit.window_s} s`;
  const meter =
    rate && !unmetered ? h('div', { class: 'meter', role: 'img', 'aria-label': `${Math.round(((rate.limit - rate.remaining) / rate.limit) * 100)} % of the rate limit used` }, h('span', { 'data-used': rate.limit - rate.remaining })) : null;
  const fact = (term, value, extra) => h('div', {}, h('dt', {}, term), h('dd', {}, value, extra));
  fill(
    $('account'),
    fact('Name', me.name),
    fact('Key id', h('span', { class: 'mono' }, me.id)),
    fact('Environment', me.environment),
    fact('Plan', h('span', { id: 'plan' }, me.plan)),
    fact('Products', h('span', { id: 'products' }, me.products.join(', '))),
    fact('Sports', h('span', { id: 'sports' }, me.sports ? me.sports.join(', ') : 'all')),
    fact('Leagues', me.leagues ? me.leagues.join(', ') : 'all'),
    fact('Rate limit', h('span', { id: 'rate-usage' }, usage), meter),
    fact('Stream connections', `up to ${me.stream_connections.limit}`),
  );
  const bar = meter?.firstElementChild;
  if (bar instanceof HTMLElement && rate) bar.style.width = `${Math.min(100, ((rate.limit - rate.remaining) / rate.limit) * 100)}%`;
}

onRateLimit((rate) => {
  state.rate = rate;
  if (state.me) renderAccount();
});

// ---------- notifications ----------

async function loadNotifications() {
  const list = $('notifications');
  if (!state.me.products.includes('live')) {
    fill(list, h('li', { class: 'muted' }, 'Notifications are about webhooks, which need the live product.'));
    return;
  }
  const page = await api('GET', '/v1/notifications?limit=20');
  fill(
    list,
    page.data.length
      ? page.data.map((n) =>
          h(
            'li',
            { 'data-notification': n.id, 'data-type': n.type },
            h('div', { class: 'row' }, h('span', { class: 'badge warn' }, n.type === 'webhook_endpoint.disabled' ? 'Endpoint turned off' : n.type), timeEl(n.created_at)),
            h('p', { class: 'small' }, n.message),
          ),
        )
      : h('li', { class: 'muted' }, 'No notifications.'),
  );
}

// ---------- a competition's status history (docs/schedule.md) ----------

const STATUS_WORDS = { scheduled: 'Scheduled', live: 'Live', final: 'Final', postponed: 'Postponed', suspended: 'Suspended', cancelled: 'Cancelled' };

/** `soccer_intl_30117` or `soccer_30117` → the competition id and the game id, else null. */
function idsOf(raw) {
  const c = /^([a-z]+)_([a-z0-9]{1,16})_(\d{1,12})$/.exec(raw);
  if (c) return { competition: raw, game: `${c[1]}_${c[3]}` };
  const g = /^([a-z]+)_(\d{1,12})$/.exec(raw);
  return g ? { competition: null, game: raw } : null;
}

async function showHistory(raw) {
  const ids = idsOf(raw.trim());
  if (!ids) throw new Error('enter a competition id (soccer_intl_30117) or a game id (soccer_30117).');
  const game = (await api('GET', `/v1/games/${encodeURIComponent(ids.game)}`)).data;
  const events = [];
  let cursor = null;
  do {
    const page = await api('GET', `/v1/games/${encodeURIComponent(ids.game)}/events?types=status&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    events.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  fill(
    $('history-now'),
    h('dt', {}, 'Now'),
    h('dd', { 'data-status-now': game.status }, STATUS_WORDS[game.status] ?? game.status),
    h('dt', {}, 'Starts'),
    h('dd', {}, game.start_time ? timeEl(game.start_time) : 'not known'),
    ...(game.original_start_time ? [h('dt', {}, 'First announced'), h('dd', { 'data-original-start': game.original_start_time }, timeEl(game.original_start_time))] : []),
  );
  fill(
    $('history'),
    events.length
      ? events.map((e) =>
          h(
            'li',
            { 'data-event': e.id, 'data-status': e.status },
            h('div', { class: 'row' }, h('span', { class: 'badge' }, `${STATUS_WORDS[e.previous_status] ?? e.previous_status} → ${STATUS_WORDS[e.status] ?? e.status}`), timeEl(e.ts)),
            h('p', { class: 'small' }, [e.reason ? `Reason: ${e.reason}.` : 'No reason given.', e.start_time ? ` Start: ${new Date(e.start_time).toUTCString()}.` : ''].join('')),
          ),
        )
      : h('li', { class: 'muted' }, 'No status changes: the game has kept its schedule.'),
  );
}

function setupHistory() {
  const form = /** @type {HTMLFormElement} */ ($('history-form'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($('history-id'));
    const button = /** @type {HTMLButtonElement} */ (form.querySelector('button'));
    void act(button, () => showHistory(input.value), $('history-error'));
  });
}

// ---------- deliveries ----------

function attemptsTable(attempts) {
  if (!attempts.length) return h('p', { class: 'small muted' }, 'No attempt yet.');
  return h(
    'table',
    { class: 'attempts stack' },
    h('thead', {}, h('tr', {}, ['#', 'Time', 'Status code', 'Duration', 'Error', 'Response excerpt'].map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      attempts.map((a) =>
        h(
          'tr',
          { 'data-attempt': a.attempt },
          h('td', { 'data-label': '#' }, a.attempt),
          h('td', { 'data-label': 'Time' }, timeEl(a.at)),
          h('td', { 'data-label': 'Status code', class: 'status-code' }, a.status_code ?? '—'),
          h('td', { 'data-label': 'Duration', class: 'duration' }, `${a.duration_ms} ms`),
          h('td', { 'data-label': 'Error', class: 'error' }, a.error ?? '—'),
          h('td', { 'data-label': 'Response excerpt' }, a.response_excerpt ? h('pre', { class: 'excerpt' }, a.response_excerpt) : '—'),
        ),
      ),
    ),
  );
}

const deliveryBadge = (status) => h('span', { class: `badge ${status === 'delivered' ? 'ok' : status === 'pending' ? 'neutral' : 'bad'}`, 'data-status': status }, status);

function deliveryItem(ep, d, onReplayed, errorBox) {
  const detailsId = `attempts-${d.id}`;
  const details = h('div', { id: detailsId, class: 'delivery-body', hidden: true });
  const toggle = h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': detailsId }, 'Attempts');
  toggle.addEventListener('click', () =>
    act(
      toggle,
      async () => {
        const open = toggle.getAttribute('aria-expanded') === 'true';
        if (open) {
          toggle.setAttribute('aria-expanded', 'false');
          details.hidden = true;
          return;
        }
        const full = (await api('GET', `/v1/webhooks/${ep.id}/deliveries/${d.id}`)).data;
        fill(details, attemptsTable(full.attempt_log));
        details.hidden = false;
        toggle.setAttribute('aria-expanded', 'true');
      },
      errorBox,
    ),
  );
  const replay = h('button', { type: 'button', class: 'replay' }, 'Replay');
  replay.addEventListener('click', () =>
    act(
      replay,
      async () => {
        const r = (await api('POST', `/v1/webhooks/${ep.id}/replay`, { delivery_id: d.id })).data;
        toast(`Replay queued as ${r.delivery_ids[0]}`);
        await onReplayed();
      },
      errorBox,
    ),
  );
  return h(
    'li',
    { class: 'delivery', 'data-delivery': d.id, 'data-event': d.event_id },
    h(
      'div',
      { class: 'row spread' },
      h(
        'div',
        { class: 'row' },
        deliveryBadge(d.status),
        h('span', { class: 'mono' }, d.event_id),
        h('span', { class: 'small muted' }, `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`),
        d.last_status_code !== null ? h('span', { class: 'small' }, `last ${d.last_status_code}`) : null,
        h('span', { class: 'small muted' }, 'created ', timeEl(d.created_at)),
      ),
      h('div', { class: 'actions' }, toggle, replay),
    ),
    d.last_error ? h('p', { class: 'small muted' }, d.last_error) : null,
    details,
  );
}

function deliveryLog(ep, errorBox) {
  const filterId = `filter-${ep.id}`;
  const select = h('select', { id: filterId }, h('option', { value: '' }, 'All'), DELIVERY_STATUSES.map((s) => h('option', { value: s }, s)));
  const list = h('ul', { class: 'deliveries plain-list' });
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  let cursor = null;

  const load = async (reset) => {
    if (reset) cursor = null;
    const q = new URLSearchParams({ limit: String(PAGE) });
    const status = /** @type {HTMLSelectElement} */ (select).value;
    if (status) q.set('status', status);
    if (cursor) q.set('cursor', cursor);
    const page = await api('GET', `/v1/webhooks/${ep.id}/deliveries?${q}`);
    const items = page.data.map((d) => deliveryItem(ep, d, () => load(true), errorBox));
    if (reset) fill(list, items.length ? items : h('li', { class: 'muted small' }, status ? `No ${status} deliveries.` : 'No deliveries yet.'));
    else list.append(...items);
    cursor = page.next_cursor;
    more.hidden = !cursor;
  };
  select.addEventListener('change', () => act(/** @type {HTMLButtonElement} */ (more), () => load(true), errorBox));
  more.addEventListener('click', () => act(more, () => load(false), errorBox));

  // Time-range replay: datetime-local is the user's local time; the API takes ISO UTC.
  const fromId = `from-${ep.id}`;
  const toId = `to-${ep.id}`;
  const local = (ms) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const from = h('input', { type: 'datetime-local', id: fromId, value: local(Date.now() - 3_600_000) });
  const to = h('input', { type: 'datetime-local', id: toId, value: local(Date.now() + 60_000) });
  const rangeResult = h('p', { class: 'small', role: 'status' });
  const rangeForm = h(
    'form',
    { class: 'inline-form replay-range', novalidate: true },
    h('div', {}, h('label', { for: fromId }, 'From'), from),
    h('div', {}, h('label', { for: toId }, 'To'), to),
    h('button', { type: 'submit' }, 'Replay range'),
  );
  rangeForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const button = /** @type {HTMLButtonElement} */ (rangeForm.querySelector('button'));
    act(
      button,
      async () => {
        const f = /** @type {HTMLInputElement} */ (from).value;
        const t = /** @type {HTMLInputElement} */ (to).value;
        if (!f || !t) throw new Error('choose both times');
        const r = (await api('POST', `/v1/webhooks/${ep.id}/replay`, { from: new Date(f).toISOString(), to: new Date(t).toISOString() })).data;
        rangeResult.textContent = `Replayed ${r.replayed} event${r.replayed === 1 ? '' : 's'}.`;
        await load(true);
      },
      errorBox,
    );
  });

  const root = h(
    'div',
    { class: 'delivery-log' },
    h('div', { class: 'row spread' }, h('h3', {}, 'Delivery log'), h('div', { class: 'row' }, h('label', { for: filterId }, 'Status'), select)),
    list,
    more,
    h('h3', { class: 'small-gap' }, 'Replay a time range'),
    rangeForm,
    rangeResult,
  );
  return { root, load };
}

// ---------- endpoints ----------

function endpointCard(ep) {
  const card = h('article', { class: 'endpoint', 'data-endpoint': ep.id, 'aria-label': `Endpoint ${ep.url}` });
  const errorBox = h('p', { class: 'error-box', role: 'alert', hidden: true });
  const output = h('div', { 'aria-live': 'polite' });
  const enabled = ep.status === 'enabled';
  const badge = h('span', { class: `badge ${enabled ? 'ok' : 'bad'} status-badge` }, enabled ? 'Enabled' : 'Disabled');

  const replaceCard = (next) => {
    const fresh = endpointCard(next);
    card.replaceWith(fresh);
    return fresh;
  };

  const button = (label, cls, fn) => {
    const b = h('button', { type: 'button', class: cls }, label);
    b.addEventListener('click', () => act(b, () => fn(b), errorBox));
    return b;
  };

  const test = button('Send test event', 'test', async () => {
    const r = (await api('POST', `/v1/webhooks/${ep.id}/test`)).data;
    fill(
      output,
      h(
        'div',
        { class: r.delivered ? 'success-box test-result' : 'error-box test-result', 'data-delivered': String(r.delivered) },
        h('strong', {}, r.delivered ? 'Test event delivered' : 'Test event failed'),
        h('p', { class: 'small' }, `Status code ${r.status_code ?? '—'} · ${r.duration_ms} ms${r.error ? ` · ${r.error}` : ''}`),
        r.response_excerpt ? h('pre', { class: 'excerpt' }, r.response_excerpt) : null,
      ),
    );
  });

  const editId = `edit-${ep.id}`;
  const edit = h('button', { type: 'button', 'aria-expanded': 'false', 'aria-controls': editId }, 'Edit sports');
  const editForm = h(
    'form',
    { id: editId, class: 'edit-sports', hidden: true, novalidate: true },
    h('fieldset', {}, h('legend', {}, 'Sports delivered'), h('div', { class: 'checks' }, sportChecks(`sports-${ep.id}`, ep.sports)), h('p', { class: 'small muted' }, 'None checked: every sport this key may see.')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Save sports'), h('button', { type: 'button', class: 'cancel' }, 'Cancel')),
  );
  edit.addEventListener('click', () => {
    const open = edit.getAttribute('aria-expanded') === 'true';
    edit.setAttribute('aria-expanded', String(!open));
    editForm.hidden = open;
    if (!open) /** @type {HTMLElement | null} */ (editForm.querySelector('input'))?.focus();
  });
  editForm.querySelector('.cancel')?.addEventListener('click', () => {
    edit.setAttribute('aria-expanded', 'false');
    editForm.hidden = true;
    edit.focus();
  });
  editForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const save = /** @type {HTMLButtonElement} */ (editForm.querySelector('button[type="submit"]'));
    act(
      save,
      async () => {
        const sports = checkedSports(editForm, `sports-${ep.id}`);
        const next = (await api('PATCH', `/v1/webhooks/${ep.id}`, { sports: sports.length ? sports : null })).data;
        const fresh = replaceCard(next);
        toast('Sports saved');
        /** @type {HTMLElement | null} */ (fresh.querySelector('[aria-controls^="edit-"]'))?.focus();
      },
      errorBox,
    );
  });

  const rotate = button('Rotate secret', 'rotate', async () => {
    if (!(await confirmDialog('Rotate the signing secret?', `A new secret signs every delivery to ${ep.url} from now on. The current one keeps signing beside it for 24 hours, so you can switch your receiver over.`, 'Rotate secret'))) return;
    const r = (await api('POST', `/v1/webhooks/${ep.id}/rotate-secret`)).data;
    fill(output, secretBox('New signing secret', r.secret, 'Shown only now: copy it to your receiver. The old secret keeps signing for 24 hours.'));
  });

  const del = button('Delete', 'danger delete', async () => {
    if (!(await confirmDialog('Delete this endpoint?', `${ep.url} stops receiving events, and its delivery log is deleted with it. This cannot be undone.`, 'Delete endpoint'))) return;
    await api('DELETE', `/v1/webhooks/${ep.id}`);
    card.remove();
    toast('Endpoint deleted');
    if (!$('endpoints').querySelector('.endpoint')) fill($('endpoints'), h('p', { class: 'muted' }, 'No webhook endpoints yet.'));
    /** @type {HTMLElement} */ ($('new-url')).focus();
  });

  const reenable = enabled
    ? null
    : button('Re-enable', 'primary reenable', async () => {
        const next = (await api('POST', `/v1/webhooks/${ep.id}/enable`)).data;
        const fresh = replaceCard(next);
        toast('Endpoint is back on; events it missed can be sent again from its delivery log');
        /** @type {HTMLElement | null} */ (fresh.querySelector('button.test'))?.focus();
      });

  const logId = `log-${ep.id}`;
  const log = deliveryLog(ep, errorBox);
  const logBox = h('div', { id: logId, class: 'body', hidden: true }, log.root);
  const logToggle = h('button', { type: 'button', class: 'deliveries-toggle', 'aria-expanded': 'false', 'aria-controls': logId }, 'Delivery log');
  logToggle.addEventListener('click', () =>
    act(
      logToggle,
      async () => {
        const open = logToggle.getAttribute('aria-expanded') === 'true';
        if (!open) await log.load(true);
        logToggle.setAttribute('aria-expanded', String(!open));
        logBox.hidden = open;
      },
      errorBox,
    ),
  );

  const reason = ep.disabled_reason === 'gone' ? 'the receiver answered 410 Gone' : ep.disabled_reason === 'failing' ? 'every delivery failed for too long' : ep.disabled_reason;
  card.append(
    h('header', {}, h('span', { class: 'url' }, ep.url), badge),
    h(
      'div',
      { class: 'body' },
      h(
        'p',
        { class: 'small muted' },
        h('span', { class: 'mono' }, ep.id),
        ` · sports: ${ep.sports ? ep.sports.join(', ') : 'all'}`,
        ep.description ? ` · ${ep.description}` : '',
        ' · created ',
        timeEl(ep.created_at),
        ep.previous_secret_expires_at ? [' · previous secret signs until ', timeEl(ep.previous_secret_expires_at)] : null,
      ),
      enabled ? null : h('p', { class: 'notice small' }, 'Turned off ', timeEl(ep.disabled_at), reason ? `: ${reason}. ` : '. ', 'Fix the receiver, then switch the endpoint back on; events it missed can be sent again from its delivery log.'),
      h('div', { class: 'actions' }, reenable, test, edit, rotate, logToggle, del),
      editForm,
      errorBox,
      output,
    ),
    logBox,
  );
  return card;
}

async function loadEndpoints() {
  const box = $('endpoints');
  const all = [];
  let cursor = null;
  do {
    const page = await api('GET', `/v1/webhooks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  fill(box, all.length ? all.map(endpointCard) : h('p', { class: 'muted' }, 'No webhook endpoints yet.'));
}

function setupCreate() {
  const form = /** @type {HTMLFormElement} */ ($('create-endpoint'));
  fill($('new-sports'), sportChecks('new-sport', null));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const submit = /** @type {HTMLButtonElement} */ (form.querySelector('button[type="submit"]'));
    act(submit, async () => {
      const url = /** @type {HTMLInputElement} */ ($('new-url')).value.trim();
      const description = /** @type {HTMLInputElement} */ ($('new-description')).value.trim();
      const sports = checkedSports(form, 'new-sport');
      const body = { url, tier: 'confirmed', ...(sports.length ? { sports } : {}), ...(description ? { description } : {}) };
      const created = (await api('POST', '/v1/webhooks', body)).data;
      form.reset();
      fill($('created'), secretBox('Signing secret', created.secret, `For ${created.url}. Shown only now: copy it to your receiver to verify X-SVC-Signature.`));
      await loadEndpoints();
      /** @type {HTMLElement | null} */ ($('created').querySelector('button.copy'))?.focus();
    });
  });
}

// ---------- replays ----------

/** Team sports have games, and a replay plays a game. */
const REPLAY_SPORTS = ['soccer', 'basketball'];
/** @type {{seasons: any[], games: any[], poll: number | null}} */
const replays = { seasons: [], games: [], poll: null };

const teamCode = (entityId) => String(entityId).split(':').pop() ?? '';
const option = (value, text, selected = false) => h('option', { value, selected }, text);

function replayBadge(status) {
  const kind = status === 'finished' ? 'ok' : status === 'cancelled' ? 'bad' : status === 'running' ? 'warn' : 'neutral';
  return h('span', { class: `badge ${kind}`, 'data-status': status }, status);
}

function gameLabel(g) {
  const [home, away] = g.competitors;
  return `${g.date} · ${teamCode(home?.entity_id)} ${home?.score ?? ''}–${away?.score ?? ''} ${teamCode(away?.entity_id)} (${g.id})`;
}

/** The league's seasons, newest first, into the season select. */
function fillSeasons() {
  const league = /** @type {HTMLSelectElement} */ ($('replay-league')).value;
  const seasons = replays.seasons.filter((s) => s.league === league).sort((a, b) => (a.label < b.label ? 1 : -1));
  fill($('replay-season'), seasons.map((s) => option(s.label, s.label)));
}

/** The final games of the chosen league and season, then the teams among them. */
async function loadReplayGames() {
  const league = /** @type {HTMLSelectElement} */ ($('replay-league')).value;
  const season = /** @type {HTMLSelectElement} */ ($('replay-season')).value;
  replays.games = [];
  if (league && season) {
    let cursor = null;
    do {
      const q = `league=${encodeURIComponent(league)}&season=${encodeURIComponent(season)}&status=final&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await api('GET', `/v1/games?${q}`);
      replays.games.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor && replays.games.length < 2000);
  }
  const teams = [...new Set(replays.games.flatMap((g) => g.competitors.map((c) => teamCode(c.entity_id))))].sort();
  // A choice made while the list was loading stays when it is still there.
  const picked = /** @type {HTMLSelectElement} */ ($('replay-team')).value;
  fill($('replay-team'), option('', 'Any team'), teams.map((t) => option(t, t, t === picked)));
  fillGames();
}

function fillGames() {
  const team = /** @type {HTMLSelectElement} */ ($('replay-team')).value;
  const games = replays.games.filter((g) => !team || g.competitors.some((c) => teamCode(c.entity_id) === team));
  // The latest first: finals and recent games are the ones people replay.
  const sorted = [...games].sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : a.id < b.id ? 1 : -1));
  const picked = /** @type {HTMLSelectElement} */ ($('replay-game')).value;
  fill($('replay-game'), sorted.length ? sorted.map((g) => option(g.id, gameLabel(g), g.id === picked)) : option('', 'No final game here'));
}

function replayItem(r) {
  const cancel = h('button', { type: 'button', class: 'danger' }, 'Cancel');
  cancel.addEventListener('click', () => act(/** @type {HTMLButtonElement} */ (cancel), async () => {
    await api('DELETE', `/v1/replays/${encodeURIComponent(r.id)}`);
    toast(`Replay ${r.id} cancelled.`);
    await loadReplays();
  }, $('replay-error')));
  const over = r.status === 'finished' || r.status === 'cancelled';
  return h(
    'li',
    { 'data-replay': r.id },
    replayBadge(r.status),
    h('span', {}, `${r.source_game_id} → `, h('strong', { class: 'mono' }, r.game_id), ` at ${r.speed}×`),
    h('span', { class: 'small muted mono' }, r.id),
    r.reason ? h('span', { class: 'small muted' }, r.reason) : null,
    over ? null : cancel,
  );
}

/** The key's replays; while one is scheduled or running, read again every 2 s. */
async function loadReplays() {
  const page = await api('GET', '/v1/replays?limit=20');
  fill($('replays'), page.data.length ? page.data.map(replayItem) : h('li', { class: 'muted' }, 'No replays yet.'));
  const active = page.data.some((r) => r.status === 'scheduled' || r.status === 'running');
  if (replays.poll !== null) clearTimeout(replays.poll);
  replays.poll = active && state.me ? setTimeout(() => void loadReplays().catch((err) => showError(err, $('replay-error'))), 2000) : null;
}

/** Shown to sandbox keys with the live product; replays are refused to production keys. */
async function showReplays() {
  const section = $('replays-section');
  section.hidden = !(state.me.environment === 'sandbox' && state.me.products.includes('live'));
  if (section.hidden) return;
  const seasons = [];
  let cursor = null;
  do {
    const page = await api('GET', `/v1/seasons?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    seasons.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  replays.seasons = seasons.filter((s) => REPLAY_SPORTS.includes(s.sport));
  const leagues = [...new Set(replays.seasons.map((s) => s.league))].sort();
  fill($('replay-league'), leagues.map((l) => option(l, l, l === 'wc')));
  fillSeasons();
  await Promise.all([loadReplayGames(), loadReplays()]);
}

function setupReplays() {
  const form = /** @type {HTMLFormElement} */ ($('replay-form'));
  const errorBox = $('replay-error');
  $('replay-league').addEventListener('change', () => {
    fillSeasons();
    void loadReplayGames().catch((err) => showError(err, errorBox));
  });
  $('replay-season').addEventListener('change', () => void loadReplayGames().catch((err) => showError(err, errorBox)));
  $('replay-team').addEventListener('change', fillGames);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const submit = /** @type {HTMLButtonElement} */ (form.querySelector('button[type="submit"]'));
    act(submit, async () => {
      const gameId = /** @type {HTMLSelectElement} */ ($('replay-game')).value;
      if (!gameId) throw new Error('pick a game to replay.');
      const speed = Number(/** @type {HTMLInputElement} */ ($('replay-speed')).value);
      const created = (await api('POST', '/v1/replays', { game_id: gameId, speed })).data;
      toast(`Replaying ${created.source_game_id} as ${created.game_id}: watch it with svc tail --game ${created.game_id}.`);
      await loadReplays();
    }, errorBox);
  });
}

// ---------- session ----------

function signOut(message) {
  session.clear();
  state.me = null;
  state.rate = null;
  if (replays.poll !== null) clearTimeout(replays.poll);
  replays.poll = null;
  fill($('replays'));
  $('replays-section').hidden = true;
  fill($('endpoints'));
  fill($('created'));
  $('app-view').hidden = true;
  $('session').hidden = true;
  $('signin-view').hidden = false;
  const err = $('signin-error');
  if (message) {
    err.textContent = message;
    err.hidden = false;
  } else err.hidden = true;
  /** @type {HTMLElement} */ ($('api-key')).focus();
}

/** Loads the key, its endpoints and notifications, then shows the app: once it is visible, its lists are there. */
async function showApp() {
  state.me = (await api('GET', '/v1/me')).data;
  $('who').textContent = `Signed in: ${state.me.name}`;
  renderAccount();
  clearError();
  const live = state.me.products.includes('live');
  $('webhooks-body').hidden = !live;
  try {
    if (live) await Promise.all([loadEndpoints(), loadNotifications(), showReplays()]);
    else {
      fill($('endpoints'));
      await loadNotifications();
      showError(new Error('this key has no live product, which webhooks need.'));
    }
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw err;
    showError(err);
  }
  $('signin-view').hidden = true;
  $('app-view').hidden = false;
  $('session').hidden = false;
  renderAccount();
}

async function start() {
  setupCreate();
  setupReplays();
  setupHistory();
  $('sign-out').addEventListener('click', () => signOut());
  $('refresh').addEventListener('click', (e) => act(/** @type {HTMLButtonElement} */ (e.currentTarget), () => Promise.all([loadEndpoints(), loadNotifications()])));
  const form = /** @type {HTMLFormElement} */ ($('signin'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($('api-key'));
    const key = input.value.trim();
    const submit = /** @type {HTMLButtonElement} */ (form.querySelector('button'));
    if (!key) {
      showError(new Error('enter an API key.'), $('signin-error'));
      return;
    }
    submit.disabled = true;
    try {
      await api('GET', '/v1/me', undefined, key);
      session.set(key);
      input.value = '';
      clearError($('signin-error'));
      await showApp();
      /** @type {HTMLElement} */ (document.querySelector('#app-view h1')).focus();
    } catch (err) {
      showError(err, $('signin-error'));
      input.focus();
    } finally {
      submit.disabled = false;
    }
  });
  /** @type {HTMLElement} */ (document.querySelector('#app-view h1')).tabIndex = -1;

  if (session.key()) {
    // Signed in already (a reload): no sign-in form flashing up while /v1/me answers.
    $('signin-view').hidden = true;
    try {
      await showApp();
      return;
    } catch (err) {
      signOut(err instanceof ApiError && err.status === 401 ? 'Your key is no longer valid; sign in again.' : undefined);
      if (!(err instanceof ApiError)) showError(err, $('signin-error'));
      return;
    }
  }
  signOut();
  $('signin-view').hidden = false;
}

void start();
