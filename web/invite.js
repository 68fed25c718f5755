// A room's invite, for whichever client the friend has: the bare code (for
// the page's room code box or any client), the link to this page, and the
// terminal command — each in a read-only field that selects whole on focus,
// with a button that copies it.

/**
 * The three ways into `room` on the server at `where` (the page's own
 * `location`: its protocol and host): the code, the page's link (`https`
 * when the page came over https) and the `ttt` command, in the form the
 * terminal client itself prints (`ttt play --join CODE --server ws://HOST/`,
 * `wss://` over https).
 */
export function inviteFor(room, where) {
  const secure = where.protocol === 'https:';
  return {
    code: room,
    link: `${secure ? 'https' : 'http'}://${where.host}/r/${room}`,
    command: `ttt play --join ${room} --server ${secure ? 'wss' : 'ws'}://${where.host}/`,
  };
}

const ROWS = [
  ['code', 'Room code', 'for the room code box or any client'],
  ['link', 'Link', 'opens this page in the room'],
  ['command', 'Terminal', 'for the ttt terminal client'],
];

/** Copies `text`; where the clipboard API is missing (plain http off localhost), through `field`'s selection. */
async function copy(text, field) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    field.focus();
    field.select();
    return document.execCommand('copy');
  }
}

/**
 * Shows `room`'s invite in `el` under `heading` (once per room: a field
 * being copied is not redrawn under the user).
 */
export function show(el, room, heading) {
  if (el.dataset.room === room) return;
  el.dataset.room = room;
  const all = inviteFor(room, location);
  const rows = ROWS.map(([key, name, what]) => {
    const row = document.createElement('div');
    row.className = 'invite-row';
    const label = document.createElement('label');
    const title = document.createElement('span');
    title.textContent = name;
    title.title = what;
    const field = document.createElement('input');
    field.readOnly = true;
    field.value = all[key];
    field.dataset.invite = key;
    field.spellcheck = false;
    field.addEventListener('focus', () => field.select());
    label.append(title, field);
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', `Copy the ${name.toLowerCase()}`);
    button.addEventListener('click', async () => {
      button.textContent = (await copy(all[key], field)) ? 'Copied' : 'Select and copy';
      setTimeout(() => { button.textContent = 'Copy'; }, 2000);
    });
    row.append(label, button);
    return row;
  });
  const head = document.createElement('p');
  head.className = 'invite-head';
  head.textContent = heading;
  el.replaceChildren(head, ...rows);
}
