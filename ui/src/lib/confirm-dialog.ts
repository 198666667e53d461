// The app's own "are you sure?": a modal <dialog> in the page's style, instead of the browser's
// confirm(), which in the app read "JavaScript - http://127.0.0.1:4477" over the question.
import { h } from './dom';

export interface ConfirmOptions {
  title: string;
  /** What happens, in a sentence or two. */
  body: string;
  /** The button that goes ahead: a verb, such as "Remove". */
  confirm: string;
  /** Whether going ahead loses something (the button is styled as a danger). */
  danger?: boolean;
}

let nextId = 0;

/** Asks; resolves true when the person chose `confirm`, false on Cancel, Escape or a click outside. */
export function confirmDialog(options: ConfirmOptions): Promise<boolean> {
  const id = `confirm-${++nextId}`;
  const cancel = h('button', { type: 'button', value: 'cancel' }, 'Cancel');
  const ok = h('button', { type: 'button', value: 'ok', class: options.danger ? 'danger' : 'primary' }, options.confirm);
  const dialog = h(
    'dialog',
    { class: 'confirm-dialog', 'aria-labelledby': `${id}-title`, 'aria-describedby': `${id}-body` },
    h('h3', { id: `${id}-title` }, options.title),
    h('p', { id: `${id}-body` }, options.body),
    h('p', { class: 'dialog-buttons' }, cancel, ok),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    let answer = false;
    const close = (yes: boolean) => {
      answer = yes;
      dialog.close();
    };
    cancel.addEventListener('click', () => close(false));
    ok.addEventListener('click', () => close(true));
    // A click on the backdrop (the dialog element itself, outside its content) cancels.
    dialog.addEventListener('click', (event) => {
      if (event.target === dialog) close(false);
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    dialog.showModal();
    // The safe choice has the focus: Enter right away does not remove anything.
    cancel.focus();
  });
}
