// The Reporters page: GET /v1/reporters (flagged first), suspend and restore, with the signed-in
// key (product admin). Like the dashboard, it has no endpoint of its own.
import { api, ApiError, session } from '/ui/api.js';
import { fill, h, timeEl } from '/ui/format.js';
import { $, clearError, confirmDialog, showError, toast } from '/ui/page.js';

/** Rows read at most per filter: a page of an operator's crowd, not an export. */
const MAX_ROWS = 5000;

/** Every page of one query, up to MAX_ROWS. */
async function readAll(query) {
  const rows = [];
  let cursor = null;
  do {
    const q = new URLSearchParams(query);
    q.set('limit', '1000');
    if (cursor) q.set('cursor', cursor);
    const page = await api('GET', `/v1/reporters?${q}`);
    rows.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor && rows.length < MAX_ROWS);
  return { rows, more: Boolean(cursor) };
}

/** The filters as the API takes them. */
function filters() {
  const q = {};
  const key = /** @type {HTMLInputElement} */ ($('filter-key')).value.trim();
  if (key) q.key = key;
  if (/** @type {HTMLInputElement} */ ($('filter-suspended')).checked) q.suspended = 'true';
  return { q, flaggedOnly: /** @type {HTMLInputElement} */ ($('filter-flagged')).checked };
}

const who = (r) => (r.reporter === null ? 'the key itself' : r.reporter);

function actionButton(r) {
  const suspend = !r.suspended;
  const b = h('button', { type: 'button', class: suspend ? 'danger suspend' : 'primary restore', 'aria-label': `${suspend ? 'Suspend' : 'Restore'} ${who(r)} (${r.key_id})` }, suspend ? 'Suspend' : 'Restore');
  b.addEventListener('click', async () => {
    const ok = suspend
      ? await confirmDialog('Suspend this reporter?', `Reports from ${who(r)} through ${r.key_id} will be stored but count for nothing, and its votes on plays still open are withdrawn now.`, 'Suspend')
      : await confirmDialog('Restore this reporter?', `Reports from ${who(r)} through ${r.key_id} count again from now on. Votes withdrawn by the suspension stay withdrawn.`, 'Restore');
    if (!ok) return;
    b.disabled = true;
    b.setAttribute('aria-busy', 'true');
    try {
      clearError();
      const next = (await api('POST', `/v1/reporters/${encodeURIComponent(r.id)}/${suspend ? 'suspend' : 'restore'}`)).data;
      toast(`${next.suspended ? 'Suspended' : 'Restored'} ${who(next)} (${next.key_id}).`);
      await load();
      /** @type {HTMLElement | null} */ (document.querySelector(`tr[data-reporter="${CSS.escape(next.id)}"] button`))?.focus();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return signOut('Your key is no longer valid; sign in again.');
      showError(err);
      b.disabled = false;
      b.removeAttribute('aria-busy');
    }
  });
  return b;
}

function reporterRow(r) {
  return h(
    'tr',
    { 'data-reporter': r.id, 'data-flagged': String(r.flagged), 'data-suspended': String(r.suspended) },
    h('td', { 'data-label': 'Reporter' }, h('div', {}, r.reporter === null ? h('span', { class: 'muted' }, 'the key’s own voice') : h('strong', {}, r.reporter), h('div', { class: 'small muted mono' }, r.key_id))),
    h('td', { 'data-label': 'Weight', class: 'num' }, r.weight.toFixed(3)),
    h('td', { 'data-label': 'Reports', class: 'num' }, r.reports),
    h('td', { 'data-label': 'Agreed', class: 'num' }, r.agreed),
    h('td', { 'data-label': 'Disagreed', class: 'num' }, r.disagreed),
    h('td', { 'data-label': 'Official ✓', class: 'num' }, r.official_confirmed),
    h('td', { 'data-label': 'Official ✗', class: 'num' }, r.official_contradicted),
    h(
      'td',
      { 'data-label': 'State' },
      r.flagged ? h('span', { class: 'badge warn flag' }, 'Flagged') : null,
      ' ',
      r.suspended ? h('span', { class: 'badge bad status-badge' }, 'Suspended') : h('span', { class: 'badge ok status-badge' }, 'Active'),
    ),
    h('td', { 'data-label': 'Last report' }, r.last_report_at ? timeEl(r.last_report_at) : '—'),
    h('td', { 'data-label': 'Action' }, actionButton(r)),
  );
}

/** Flagged reporters first (their own query), then the others unless only flagged ones are asked for. */
async function load() {
  const { q, flaggedOnly } = filters();
  const flagged = await readAll({ ...q, flagged: 'true' });
  const others = flaggedOnly ? { rows: [], more: false } : await readAll({ ...q, flagged: 'false' });
  const rows = [...flagged.rows, ...others.rows];
  $('summary').textContent = `${rows.length} reporter${rows.length === 1 ? '' : 's'}${flagged.rows.length ? `, ${flagged.rows.length} flagged` : ''}${flagged.more || others.more ? ` (the first ${MAX_ROWS} of each kind; narrow by key)` : ''}.`;
  if (rows.length === 0) {
    fill($('reporters'), h('p', { class: 'muted' }, 'No reporters match.'));
    return;
  }
  fill(
    $('reporters'),
    h(
      'table',
      { class: 'stack reporters' },
      h('caption', { class: 'visually-hidden' }, 'Reporters, flagged first'),
      h('thead', {}, h('tr', {}, ['Reporter', 'Weight', 'Reports', 'Agreed', 'Disagreed', 'Official ✓', 'Official ✗', 'State', 'Last report', 'Action'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows.map(reporterRow)),
    ),
  );
}

function signOut(message) {
  session.clear();
  fill($('reporters'));
  $('summary').textContent = '';
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

async function showApp() {
  const me = (await api('GET', '/v1/me')).data;
  $('who').textContent = `Signed in: ${me.name}`;
  $('signin-view').hidden = true;
  $('app-view').hidden = false;
  $('session').hidden = false;
  clearError();
  if (!me.products.includes('admin')) {
    fill($('reporters'));
    showError(new Error('this key has no admin product, which the reporters’ list needs.'));
    return;
  }
  await load();
}

async function start() {
  $('sign-out').addEventListener('click', () => signOut());
  $('filters').addEventListener('submit', (e) => {
    e.preventDefault();
    const button = /** @type {HTMLButtonElement} */ ($('filters').querySelector('button[type="submit"]'));
    button.disabled = true;
    clearError();
    load()
      .catch((err) => (err instanceof ApiError && err.status === 401 ? signOut('Your key is no longer valid; sign in again.') : showError(err)))
      .finally(() => (button.disabled = false));
  });
  $('signin').addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($('api-key'));
    const key = input.value.trim();
    if (!key) return showError(new Error('enter an API key.'), $('signin-error'));
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
    }
  });
  if (session.key()) {
    try {
      await showApp();
      return;
    } catch (err) {
      signOut(err instanceof ApiError && err.status === 401 ? 'Your key is no longer valid; sign in again.' : undefined);
      if (!(err instanceof ApiError) || err.status !== 401) showError(err, $('signin-error'));
      return;
    }
  }
  signOut();
}

void start();
