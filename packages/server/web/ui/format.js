// Small DOM and formatting helpers shared by the dashboard and the status page.
// Text always goes in through textContent: nothing from the API is ever parsed as HTML.

/**
 * Builds an element. `attrs` values: strings set attributes, functions under `on*` become
 * listeners, `false`/`null`/`undefined` are skipped; children are nodes or text.
 * @param {string} tag
 * @param {Record<string, unknown>} [attrs]
 * @param {...(Node|string|number|null|undefined|false)} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else if (k === 'class') el.className = String(v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

const UNITS = [
  ['day', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
];

/** "3 min", "2 h 5 min", "45 s". */
export function duration(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const parts = [];
  let rest = ms;
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      parts.push(`${n} ${unit}${unit === 'day' && n > 1 ? 's' : ''}`);
      rest -= n * size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ') || '0 s';
}

/** "just now", "3 min ago", "in 2 h". */
export function relative(iso, now = Date.now()) {
  const diff = Date.parse(iso) - now;
  if (Math.abs(diff) < 10_000) return 'just now';
  const d = duration(Math.abs(diff)).split(' ').slice(0, 2).join(' ');
  return diff < 0 ? `${d} ago` : `in ${d}`;
}

/** A <time> showing the relative time, with the ISO time on hover. */
export function timeEl(iso, now = Date.now()) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: iso }, relative(iso, now));
}

/** 0.99951 → "99.95 %" (never rounds a shortfall up to 100 %). */
export function percent(fraction) {
  if (fraction === null || fraction === undefined) return 'no data';
  if (fraction >= 1) return '100 %';
  return `${(Math.floor(fraction * 10000) / 100).toFixed(2)} %`;
}
