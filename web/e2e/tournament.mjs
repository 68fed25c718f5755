// An arena tournament through the page in a real browser (Debian's
// chromium, driven by playwright-core): node web/e2e/tournament.mjs SERVER_URL
// A signed-in player creates a tournament on the page and joins it; a guest
// watches its standings; a reload joins again; a scripted WebSocket bot
// (in a page of its own) joins; the player's game opens by itself, the player goes berserk and
// plays it out, the page goes back to the tournament, the standings move on
// the guest's page without a reload, and the next pairing opens by itself.
import { mkdirSync } from 'node:fs';
import {
  cell, launch, runAll, says, screens,
} from './driver.mjs';

const [server] = process.argv.slice(2);
const { browser, open } = await launch(server);

/** Registers `name` on a page at the account view: signed in as it from then on. */
async function register(page, name) {
  await page.getByLabel('Name', { exact: true }).first().fill(name);
  await page.getByRole('button', { name: 'Register' }).click();
  await page.getByText(`Signed in as ${name}`).waitFor();
}

/** The standings table as `page` shows it: name → score, as text. */
const scores = (page) => page.locator('#t-standings tbody tr').evaluateAll((rows) => Object.fromEntries(
  rows.map((r) => [r.dataset.name, r.cells[2].textContent]),
));

/**
 * A bot account `name` that joins tournament `id` over a WebSocket of its
 * own (in a blank page of a fresh context) and plays every game it is
 * paired in, each move the first free cell. Its page's `said` lists what
 * the server told it, for a failure's message.
 */
async function bot(name, id) {
  const page = await (await browser.newContext()).newPage();
  const ws = new URL(server);
  ws.protocol = 'ws:';
  await page.evaluate(([url, me, tournament]) => {
    window.said = [];
    const socket = new WebSocket(url);
    const send = (m) => socket.send(JSON.stringify(m));
    let game = null;
    const play = () => {
      if (!game || game.turn !== game.you) return;
      for (let i = 0; i < game.size * game.size; i++) {
        const [row, col] = [Math.floor(i / game.size), i % game.size];
        if (!game.taken.has(`${row},${col}`)) {
          send({ type: 'move', row, col });
          return;
        }
      }
    };
    socket.onmessage = (e) => {
      const m = JSON.parse(e.data);
      window.said.push(m.type === 'error' ? `error ${m.code}: ${m.message}` : m.type);
      if (m.type === 'welcome') send({ type: 'register', name: me, bot: true });
      if (m.type === 'registered') send({ type: 'hello', name: me, token: m.token });
      if (m.type === 'authenticated') send({ type: 'tournament_join', id: tournament });
      if (m.type === 'game_started') {
        game = { you: m.you, size: m.size, turn: m.turn, taken: new Set(m.moves.map(([r, c]) => `${r},${c}`)) };
        play();
      }
      if (m.type === 'moved' && game) {
        game.taken.add(`${m.row},${m.col}`);
        game.turn = m.next;
        play();
      }
      if (m.type === 'game_over') game = null;
    };
  }, [ws.href, name, id]);
  return page;
}

/**
 * Plays `page`'s tournament game on random free cells until the page is
 * back on the tournament's page by itself (its "last game" line changes;
 * the next game may open right after, so the line is read, not seen).
 * Returns that line.
 */
async function playOut(page) {
  const before = await page.locator('#t-last').innerHTML();
  for (;;) {
    await page.waitForFunction((b) => document.getElementById('t-last').innerHTML !== b
      || (!document.getElementById('game').hidden && document.querySelector('[role=status]').textContent.startsWith('Your turn')), before);
    if ((await page.locator('#t-last').innerHTML()) !== before) return page.locator('#t-last').textContent();
    const free = await page.locator('#board button.cell').evaluateAll((bs) => bs.filter((b) => !b.textContent).map((b) => b.getAttribute('aria-label')));
    const pick = free[Math.floor(Math.random() * free.length)];
    await cell(page, pick).click();
    // Marked, or the move ended the game and the page went back to the tournament.
    await page.waitForFunction(([b, name]) => document.getElementById('t-last').innerHTML !== b
      || !!document.querySelector(`#board button[aria-label^="${name} "]`), [before, pick]);
  }
}

const scenarios = {
  async 'a tournament made on the page: joined, paired with a bot, the game opens by itself with berserk, the standings move live'() {
    const tag = Math.floor(Math.random() * 1e6);
    const [name, title] = [`ann${tag}`, `Arena ${tag}`];
    const ann = await open('/#/account');
    await register(ann, name);
    await ann.getByRole('link', { name: 'Tournaments' }).click();
    // A custom clock out of range is said on the page, and nothing is sent.
    await ann.getByLabel('Tournament name').fill(title);
    await ann.getByLabel('Time control').selectOption('custom');
    await ann.getByLabel('Initial (min)').fill('999');
    await ann.getByRole('button', { name: 'Create the tournament' }).click();
    await ann.locator('#t-create-note.error').getByText('from 1 second to 180 minutes').waitFor();
    await ann.getByLabel('Time control').selectOption('1+0');
    await ann.getByLabel('Lasts (min)').fill('2');
    await ann.getByRole('button', { name: 'Create the tournament' }).click();
    // Its page opens, with its terms and the time to its end.
    await ann.waitForURL(/#\/tournaments\/[^/]+$/);
    const id = decodeURIComponent(new URL(ann.url()).hash.split('/')[2]);
    await ann.locator('#t-title').getByText(title).waitFor();
    await ann.locator('#t-terms').getByText('3×3, 1+0, 2 min').waitFor();
    await ann.locator('#t-time').getByText(/^Running: ends in [12]:\d\d\./).waitFor();

    // A guest finds it in the list and watches; joining is for accounts.
    const guest = await open('/#/tournaments');
    await guest.locator('#t-list').getByRole('link', { name: title }).click();
    await guest.getByText('Nobody has joined yet.').waitFor();
    await guest.locator('#t-hint').getByText('Sign in to play in tournaments.').waitFor();
    await guest.getByRole('button', { name: 'Join' }).click();
    await guest.locator('#t-note.error').getByText(/^Sign in to play in tournaments/).waitFor();

    // Join, pause, join again: each shows on the guest's page as it happens.
    const row = (page) => page.locator(`#t-standings tr[data-name="${name}"]`);
    await ann.getByRole('button', { name: 'Join', exact: true }).click();
    await ann.getByRole('button', { name: 'Pause' }).click();
    await row(guest).getByText('paused').waitFor();
    await ann.getByRole('button', { name: 'Join', exact: true }).click();
    await ann.getByRole('button', { name: 'Pause' }).waitFor();
    await row(guest).getByText('paused').waitFor({ state: 'detached' });
    // A reload joins again by itself: the server forgets a closed connection's membership, the tab does not.
    await ann.reload();
    await ann.getByRole('button', { name: 'Pause' }).waitFor();
    if (!(await row(ann).evaluate((tr) => tr.classList.contains('me')))) throw new Error('our own row is not marked');
    const before = await scores(guest);
    if (before[name] !== '0') throw new Error(`standings before a game: ${JSON.stringify(before)}`);

    // The bot joins; the pairing opens ann's game by itself.
    const opponent = await bot(`bot${tag}`, id);
    const botSaid = async () => (await opponent.evaluate(() => window.said)).join(', ');
    try {
      await ann.locator('#game').waitFor();
      await says(ann, /turn/);
    } catch (e) {
      throw new Error(`no game opened: ${e.message}; the bot was told: ${await botSaid()}`);
    }
    if ((await ann.locator('#result').isVisible()) || (await ann.getByRole('button', { name: 'Rematch' }).isVisible())) {
      throw new Error('a tournament game offers a rematch');
    }
    // Berserk before the first move: the mark by ann's name, her clock halved, the button spent.
    const seat = (await ann.locator('#players').textContent()).includes('(you are X)') ? 1 : 2;
    await ann.getByRole('button', { name: 'Berserk' }).click();
    await ann.locator('#players .berserk-mark').waitFor();
    await ann.locator(`#clock-${seat} .who`).getByText('⚡berserk').waitFor();
    const face = await ann.locator(`#clock-${seat} .time`).textContent();
    if (!/^0:(30|29|2\d)$/.test(face)) throw new Error(`the berserk clock shows ${face}, not half of 1:00`);
    if (!(await ann.getByRole('button', { name: 'Berserk' }).isDisabled())) throw new Error('berserk is offered twice');
    mkdirSync(screens, { recursive: true });
    await ann.screenshot({ path: `${screens}/tournament-game-berserk.png` });
    // Back on the tournament's page by itself, saying how it went; the
    // guest's standings moved without a reload.
    const last = await playOut(ann);
    if (!/^Your last game: (You won|You lost|Draw)/.test(last)) throw new Error(`after the game the page says ${last}`);
    await guest.waitForFunction((before) => {
      const now = [...document.querySelectorAll('#t-standings tbody tr')].map((r) => `${r.dataset.name}=${r.cells[2].textContent}`);
      return now.length === 2 && now.join() !== before && now.some((s) => !s.endsWith('=0'));
    }, Object.entries(before).map(([n, s]) => `${n}=${s}`).join());
    const after = await scores(guest);
    const games = await row(guest).locator('td').nth(3).textContent();
    if (games !== '1') throw new Error(`${name} has ${games} games in the standings after one`);
    await guest.locator('#t-games').getByRole('link', { name: 'game 1' }).waitFor();
    await guest.screenshot({ path: `${screens}/tournament-standings.png` });

    // The next pairing opens the next game by itself.
    await ann.locator('#game').waitFor();
    await says(ann, /turn/);
    if (!(await ann.getByRole('button', { name: 'Berserk' }).isEnabled())) throw new Error('no berserk in the next game');
    console.log(`# standings after the first game: ${JSON.stringify(after)}`);
  },
};

await runAll(browser, scenarios);
