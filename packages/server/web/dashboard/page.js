// The pieces every dashboard page shows its state with: an element by id, the toast, the error
// box and the confirmation dialog (each page's HTML has the same ids for them).
import { ApiError } from '/ui/api.js';

export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

export function toast(text) {
  const t = $('toast');
  t.textContent = text;
  t.hidden = false;
  clearTimeout(Number(t.dataset.timer));
  t.dataset.timer = String(setTimeout(() => (t.hidden = true), 4000));
}

export function showError(err, where = $('app-error')) {
  where.textContent = err instanceof ApiError ? `${err.message}${err.code ? ` (${err.code})` : ''}` : `Something went wrong: ${err instanceof Error ? err.message : String(err)}`;
  where.hidden = false;
}

export function clearError(where = $('app-error')) {
  where.hidden = true;
  where.textContent = '';
}

export function confirmDialog(title, text, okLabel) {
  const dialog = /** @type {HTMLDialogElement} */ ($('confirm'));
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = okLabel;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }));
}
