// The page in a real browser (Debian's chromium, driven by playwright-core):
// node web/e2e/browser.mjs SERVER_URL TTT_BINARY
// The server runs a turn clock (a long one) so that the clock can be seen.
// Each scenario runs in fresh browser contexts (driver.mjs: a failing one
// leaves screenshots in target/web-failures/, and those a scenario takes on
// purpose go to $SCREENS, or target/web-screens/).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import {
  cell, launch, playToTheEnd, runAll, says, screens, status,
} from './driver.mjs';

const [server, ttt] = process.argv.slice(2);
const { browser, open } = await launch(server);

/** The invite a page shows once its room is open (or in `within`): its code, link and terminal command. */
async function invitation(page, within = '#invite') {
  const field = (key) => page.locator(`${within} input[data-invite=${key}]`);
  await field('code').waitFor();
  const [code, link, command] = await Promise.all(['code', 'link', 'command'].map((k) => field(k).inputValue()));
  return { code, link, command };
}
const inviteLink = async (page) => (await invitation(page)).link;

/** The computed colour of the page's warning colour (`--warn`), as the browser writes colours. */
const warnColour = (page) => page.evaluate(() => {
  const probe = document.createElement('span');
  probe.style.color = 'var(--warn)';
  document.body.append(probe);
  const rgb = getComputedStyle(probe).color;
  probe.remove();
  return rgb;
});

/** The end banner as shown: visible, its score, headline and how, and the cells marked as the winning line. */
async function banner(page) {
  await page.locator('#result').waitFor();
  return page.evaluate(() => ({
    score: document.getElementById('score').hidden ? '' : document.getElementById('score').textContent,
    headline: document.getElementById('headline').textContent,
    how: document.getElementById('how').textContent,
    line: [...document.querySelectorAll('#board button.cell.win')].map((b) => b.getAttribute('aria-label')).join(' '),
  }));
}

/** Fails unless `got` has every field of `want`. */
function expect(what, got, want) {
  for (const [k, v] of Object.entries(want)) {
    if (got[k] !== v) throw new Error(`${what}: ${k} is ${JSON.stringify(got[k])}, not ${JSON.stringify(v)} (${JSON.stringify(got)})`);
  }
}

/** Plays `cells` alternately, X first, on the two pages of a game; returns [x, o]. */
async function playOut(a, b, cells) {
  await says(a, /Your turn|turn\./);
  const aIsX = (await status(a).textContent()).includes('Your turn (X)');
  const [x, o] = aIsX ? [a, b] : [b, a];
  for (const [i, name] of cells.entries()) {
    const [mover, mark] = i % 2 === 0 ? [x, 'X'] : [o, 'O'];
    await says(mover, 'Your turn');
    await cell(mover, name).click();
    await mover.getByRole('button', { name: `${name} ${mark}`, exact: true }).waitFor();
  }
  return [x, o];
}

/** Both pages into one game by quick match on 3×3; returns them as [a, b]. */
async function quickPair(nameA = 'ann', nameB = 'bob') {
  const a = await open();
  const b = await open();
  for (const [page, name] of [[a, nameA], [b, nameB]]) {
    await page.getByLabel('Your name').fill(name);
    await page.getByLabel('Your name').press('Tab');
    await page.getByRole('button', { name: 'Quick match' }).click();
  }
  await says(a, /turn/);
  await says(b, /turn/);
  return [a, b];
}

const scenarios = {
  async 'two players play a game to its end: a banner says who won and how, and offers a rematch'() {
    const [a, b] = await quickPair();
    const [x, o] = await playOut(a, b, ['a1', 'b1', 'a2', 'b2', 'a3']);
    await says(x, 'You won — 3 in a row.');
    await says(o, 'You lost — your opponent made 3 in a row.');
    // The banner: the score X first, who won and how, the winning line on the board.
    expect('the winner\'s banner', await banner(x), { score: '1-0', headline: 'You won', how: '3 in a row', line: 'a1 X a2 X a3 X' });
    expect('the loser\'s banner', await banner(o), { score: '1-0', headline: 'You lost', how: 'Your opponent made 3 in a row', line: 'a1 X a2 X a3 X' });
    for (const page of [x, o]) {
      for (const name of ['Rematch', 'New game']) {
        const button = page.locator('#result').getByRole('button', { name, exact: true });
        if (!(await button.isVisible()) || (await button.isDisabled())) throw new Error(`no ${name} button in the banner`);
      }
    }
    mkdirSync(screens, { recursive: true });
    await x.screenshot({ path: `${screens}/game-over-banner-1000x800.png` });
    await o.setViewportSize({ width: 390, height: 844 });
    await o.locator('#result').getByRole('button', { name: 'Rematch' }).waitFor();
    const inView = await o.locator('#result').evaluate((el) => el.getBoundingClientRect().bottom <= window.innerHeight);
    if (!inView) throw new Error('on a phone the banner is below the fold');
    await o.screenshot({ path: `${screens}/game-over-banner-phone-390x844.png` });
    await x.getByRole('button', { name: 'Rematch' }).click();
    await o.getByRole('button', { name: 'Rematch' }).click();
    await says(o, 'Your turn (X)'); // seats swapped
    return [a, b];
  },

  async 'an invite link seats the friend, and a third visitor watches'() {
    const host = await open();
    await host.getByRole('button', { name: 'Create a room' }).click();
    const link = await inviteLink(host);
    if (!/\/r\/[A-Z0-9]{10}$/.test(link)) throw new Error(`invite link ${link}`);
    const friend = await open(new URL(link).pathname);
    // The link shows the room and who waits; the seat is the friend's on a click.
    await friend.getByText(/is waiting in room [A-Z0-9]+ for an opponent on 3×3/).waitFor();
    // The room screen offers the same three ways in as the host's invite.
    expect('the room screen\'s invite', await invitation(friend, '#room-invite'), await invitation(host));
    await friend.getByRole('button', { name: 'Take the seat and play' }).click();
    await says(host, /turn/);
    await says(friend, /turn/);
    const watcher = await open(new URL(link).pathname);
    await says(watcher, /to move/);
    if (!(await watcher.locator('#players').textContent()).includes('(watching)')) throw new Error('not watching');
    // A spectator who clicks a cell is told so.
    await cell(watcher, 'a1').click();
    await watcher.locator('#note').getByText('You are watching').waitFor();
    const [x] = await playOut(host, friend, ['b2', 'a1', 'a2', 'c1', 'c2']);
    await watcher.getByRole('button', { name: 'c2 X', exact: true }).waitFor();
    // The spectator sees the same banner in neutral words, and no rematch.
    const xName = (await x.getByLabel('Your name').inputValue());
    expect('the spectator\'s banner', await banner(watcher), { score: '1-0', headline: `X (${xName}) won`, how: '3 in a row', line: 'a2 X b2 X c2 X' });
    if (await watcher.locator('#result').getByRole('button', { name: 'Rematch' }).isVisible()) throw new Error('a spectator is offered a rematch');
    await watcher.locator('#result').getByRole('button', { name: 'New game' }).waitFor();
    return [host, friend, watcher, x];
  },

  async 'a reload takes the seat back'() {
    const [a, b] = await quickPair();
    const [x, o] = await playOut(a, b, ['a1']);
    await o.reload();
    await o.getByRole('button', { name: 'a1 X', exact: true }).waitFor();
    await says(o, 'Your turn (O)');
    await cell(o, 'c3').click();
    await x.getByRole('button', { name: 'c3 O', exact: true }).waitFor();
    return [a, b];
  },

  async 'the page plays ttt bot and the house bot'() {
    const page = await open();
    await page.getByRole('button', { name: 'Create a room' }).click();
    // The bot joins by the very command the invite shows for the terminal.
    const { command } = await invitation(page);
    const [, code, url] = /^ttt play --join (\S+) --server (\S+)$/.exec(command) ?? [];
    if (!code) throw new Error(`terminal command ${command}`);
    const bot = spawn(ttt, ['bot', '--server', url, '--join', code, '--strategy', 'random']);
    let said = '';
    bot.stderr.on('data', (d) => { said += d; });
    try {
      await playToTheEnd(page);
    } catch (e) {
      throw new Error(`${e.message}; ttt bot said: ${said}`);
    } finally {
      bot.kill();
    }
    await page.getByRole('button', { name: 'Leave' }).click();
    await page.getByLabel('House level').selectOption('random');
    await page.getByRole('button', { name: 'Play the house bot' }).click();
    await says(page, /turn/);
    if (!(await page.locator('#players').textContent()).includes('house (bot)')) throw new Error('no house');
    await playToTheEnd(page);
    // New game, right in the banner: the house again, on the same board.
    await page.locator('#result').getByRole('button', { name: 'New game' }).click();
    await says(page, /turn/);
    if (!(await page.locator('#players').textContent()).includes('house (bot)')) throw new Error('new game: no house');
    return [page];
  },

  async 'a name with markup in it is shown as text'() {
    const evil = '<img src=x id=pwn>';
    const [a, b] = await quickPair(evil, 'bob');
    const players = await b.locator('#players').textContent();
    if (!players.includes(evil)) throw new Error(`name not shown as text: ${players}`);
    if ((await b.locator('#pwn').count()) !== 0) throw new Error('the name became markup');
    return [a, b];
  },

  async 'accounts play a rated game; the leaderboard, a profile and a replay show it'() {
    const tag = Math.floor(Math.random() * 1e6);
    const [a, b] = [await open('/#/account'), await open('/#/account')];
    for (const [page, name] of [[a, `alice${tag}`], [b, `bob${tag}`]]) {
      await page.getByLabel('Name', { exact: true }).first().fill(name);
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByText(`Signed in as ${name}`).waitFor();
      await page.getByRole('link', { name: 'Play' }).click();
      await page.getByRole('button', { name: 'Quick match' }).click();
    }
    const [x] = await playOut(a, b, ['a1', 'b1', 'a2', 'b2', 'a3']);
    await says(x, 'You won');
    const winner = x === a ? `alice${tag}` : `bob${tag}`;
    await a.getByRole('link', { name: 'Leaderboard' }).click();
    // The record is written a moment after game_over: ask again until it shows.
    const listed = a.locator('#leaderboard').getByRole('link', { name: winner, exact: true });
    for (let i = 0; i < 50 && !(await listed.count()); i++) {
      await a.waitForTimeout(100);
      await a.getByRole('button', { name: 'Show' }).click();
    }
    await listed.click();
    await a.getByText('1 win, 0 draws, 0 losses').or(a.getByText('0 wins, 0 draws, 1 loss')).waitFor();
    await a.getByText(/^Registered .*\d.*\.$/).waitFor();
    // The game's line says how it ended in words, and when, in local time (no raw timestamp).
    const row = await a.locator('#profile tbody tr').first().textContent();
    if (/\(line\)|T\d\d:\d\d|Z\b/.test(row)) throw new Error(`a record in machine words: ${row}`);
    await a.getByRole('link', { name: 'replay' }).first().click();
    // A replay opens at the start and steps with the arrow keys.
    await a.getByText('Move 0 of 5.').waitFor();
    await a.keyboard.press('ArrowRight');
    await a.locator('#replay').getByRole('button', { name: 'a1 X', exact: true }).waitFor();
    await a.getByText('Move 1 of 5.').waitFor();
    await a.keyboard.press('ArrowLeft');
    await a.getByText('Move 0 of 5.').waitFor();
    await a.keyboard.press('End');
    await a.getByText(`Move 5 of 5: ${winner} won.`).waitFor();
    // The move list beside the board names every move; a click goes back to one.
    await a.locator('#replay .moves').getByRole('button', { name: 'b1', exact: true }).click();
    await a.getByText('Move 2 of 5.').waitFor();
    return [a, b];
  },

  async 'who is online, a challenge, and its acceptance'() {
    const tag = Math.floor(Math.random() * 1e6);
    const [a, b] = [await open(), await open()];
    for (const [page, name] of [[a, `cat${tag}`], [b, `dog${tag}`]]) {
      await page.getByLabel('Your name').fill(name);
      await page.getByLabel('Your name').press('Tab');
    }
    const row = a.locator('#who li').filter({ hasText: `dog${tag}` });
    await row.waitFor();
    await row.getByRole('button', { name: 'Challenge' }).click();
    await b.getByText(`cat${tag} challenges you to 3×3.`).waitFor();
    await b.getByRole('button', { name: 'Accept' }).click();
    await says(a, /turn/);
    await says(b, /turn/);
    return [a, b];
  },

  async 'a 15×15 board is wholly on screen on a laptop and a phone; 100×100 scrolls in its frame'() {
    mkdirSync(screens, { recursive: true });
    const pages = [];
    for (const [label, viewport] of [['laptop', { width: 1280, height: 720 }], ['phone', { width: 390, height: 844 }]]) {
      const page = await open('/', viewport);
      pages.push(page);
      await page.locator('#size').selectOption('15');
      await page.locator('#win').selectOption('5');
      await page.getByLabel('House level').selectOption('random');
      await page.getByRole('button', { name: 'Play the house bot' }).click();
      await says(page, /turn/);
      if ((await status(page).textContent()).startsWith('Your turn')) {
        await cell(page, 'h8').click();
        await page.getByRole('button', { name: /^h8 [XO]$/ }).waitFor();
      }
      const outside = await page.evaluate(() => {
        const cells = [...document.querySelectorAll('#board button.cell')];
        const off = cells.filter((b) => {
          const r = b.getBoundingClientRect();
          return r.left < 0 || r.top < 0 || r.right > window.innerWidth || r.bottom > window.innerHeight;
        });
        const side = Math.min(...cells.map((b) => b.getBoundingClientRect().width));
        return { count: cells.length, off: off.map((b) => b.getAttribute('aria-label')), side, scrollX: window.scrollX, scrollY: window.scrollY };
      });
      await page.screenshot({ path: `${screens}/15x15-${label}-${viewport.width}x${viewport.height}.png` });
      if (outside.count !== 225) throw new Error(`${label}: ${outside.count} cells`);
      if (outside.scrollX || outside.scrollY) throw new Error(`${label}: the page scrolled`);
      if (outside.off.length) throw new Error(`${label}: cells outside the viewport: ${outside.off.join(' ')}`);
      if (outside.side < 18) throw new Error(`${label}: cells of ${outside.side} px`);
    }
    const big = await open('/', { width: 1000, height: 800 });
    await big.locator('#size').selectOption('100');
    await big.getByRole('button', { name: 'Play the house bot' }).click();
    await says(big, /turn/);
    const fits = await big.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    if (!fits) throw new Error('a 100×100 board overflows the page');
    await big.getByRole('button', { name: 'cv100', exact: true }).waitFor({ state: 'attached' });
    return [...pages, big];
  },

  async 'the home page says what this is and offers every board size the server plays'() {
    const page = await open();
    await page.getByText('Tic-tac-toe online').waitFor();
    // The words name the same range as the menu: the server's limits.
    await page.locator('.lead').getByText('on any board from 2×2 to 100×100').waitFor();
    const sizes = await page.locator('#size option').evaluateAll((os) => os.map((o) => o.value));
    const want = Array.from({ length: 99 }, (_, i) => String(i + 2));
    if (sizes.join() !== want.join()) throw new Error(`sizes offered: ${sizes.join()}`);
    await page.locator('#size').selectOption('2');
    const wins = await page.locator('#win option').evaluateAll((os) => os.map((o) => o.value));
    if (wins.join() !== '2') throw new Error(`wins on 2×2: ${wins.join()}`);
    return [page];
  },

  async 'an invite names the code, the link and the terminal command, each copied by its button'() {
    const served = new URL(server);
    for (const viewport of [{ width: 1000, height: 800 }, { width: 390, height: 844 }]) {
      const host = await open('/', viewport);
      await host.getByRole('button', { name: 'Create a room' }).click();
      const { code, link, command } = await invitation(host);
      if (!/^[A-Z0-9]{10}$/.test(code)) throw new Error(`code ${code}`);
      expect('the invite', { link, command }, {
        link: `http://${served.host}/r/${code}`,
        command: `ttt play --join ${code} --server ws://${served.host}/`,
      });
      for (const [key, text] of [['code', code], ['link', link], ['command', command]]) {
        await host.locator('#invite .invite-row').filter({ has: host.locator(`input[data-invite=${key}]`) }).getByRole('button', { name: /^Copy/ }).click();
        const copied = await host.evaluate(() => navigator.clipboard.readText());
        if (copied !== text) throw new Error(`Copy of the ${key} gave ${JSON.stringify(copied)}`);
      }
      // Every field is whole on screen: nothing cut off at a phone's width.
      const cut = await host.locator('#invite input').evaluateAll((fs) => fs.filter((f) => f.getBoundingClientRect().right > window.innerWidth).length);
      if (cut) throw new Error(`${cut} invite fields run off a ${viewport.width} px screen`);
      mkdirSync(screens, { recursive: true });
      await host.screenshot({ path: `${screens}/invite-${viewport.width}x${viewport.height}.png` });
    }
  },

  async 'a room code that does not exist is said plainly as an error, with a way on; the guest keeps the name'() {
    const page = await open();
    const name = await page.getByLabel('Your name').inputValue();
    await page.goto(new URL('/r/NOPE', server).href);
    const alert = page.locator('#gone');
    await alert.getByText('No room has the code NOPE. It may have closed, or the code may be mistyped.').waitFor();
    // Still an error after "who is online" has been asked again (every 2 s).
    await page.waitForTimeout(2500);
    const [colour, warn] = [await alert.locator('p').evaluate((p) => getComputedStyle(p).color), await warnColour(page)];
    if (colour !== warn) throw new Error(`the error is in ${colour}, not the warning colour ${warn}`);
    if (!(await alert.isVisible())) throw new Error('the error went away by itself');
    mkdirSync(screens, { recursive: true });
    await page.screenshot({ path: `${screens}/room-not-found.png` });
    const same = async (when) => {
      const now = await page.getByLabel('Your name').inputValue();
      if (now !== name) throw new Error(`the guest's name changed ${when}: ${name} → ${now}`);
    };
    await same('on opening a link in the same tab');
    await alert.getByRole('button', { name: 'New game' }).click();
    await page.getByText('Waiting for an opponent on 3×3').waitFor();
    if (await alert.isVisible()) throw new Error('the error stays after a new game');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await same('after a new game and Cancel');
    await page.reload();
    await page.getByLabel('Your name').waitFor();
    await same('after a reload');
    return [page];
  },

  async 'Enter in the room code box joins that room'() {
    const host = await open();
    await host.getByRole('button', { name: 'Create a room' }).click();
    const code = (await inviteLink(host)).split('/').pop();
    const friend = await open();
    await friend.getByLabel('Room code').fill(code.toLowerCase());
    await friend.getByLabel('Room code').press('Enter');
    await says(friend, /turn/);
    await says(host, /turn/);
    if (!(await friend.locator('#players').textContent()).includes('you are')) throw new Error('the friend is not seated');
    return [host, friend];
  },

  async 'a signed-in player opening a room link is seated only after a click'() {
    const tag = Math.floor(Math.random() * 1e6);
    const host = await open();
    await host.getByRole('button', { name: 'Create a room' }).click();
    const link = await inviteLink(host);
    const guest = await open('/#/account');
    await guest.getByLabel('Name', { exact: true }).first().fill(`linked${tag}`);
    await guest.getByRole('button', { name: 'Register' }).click();
    await guest.getByText(`Signed in as linked${tag}`).waitFor();
    await guest.goto(link);
    await guest.getByText(/is waiting in room .* You are signed in as/).waitFor();
    // Given time to misbehave, nothing has been taken: the host still waits.
    await guest.waitForTimeout(1500);
    if (!(await host.locator('#waiting').isVisible())) throw new Error('the host is no longer waiting');
    if (await guest.locator('#game').isVisible()) throw new Error('the link took the seat');
    await guest.getByRole('button', { name: 'Take the seat and play' }).click();
    await says(host, /turn/);
    await says(guest, /turn/);
    return [host, guest];
  },

  async 'who is online is live: a newcomer shows within 3 s without a refresh'() {
    const tag = Math.floor(Math.random() * 1e6);
    const watcher = await open();
    await watcher.locator('#who li').first().waitFor();
    const other = await open();
    await other.getByLabel('Your name').fill(`late${tag}`);
    const named = Date.now();
    await other.getByLabel('Your name').press('Tab');
    await watcher.locator('#who li').filter({ hasText: `late${tag}` }).waitFor({ timeout: 3000 });
    const took = Date.now() - named;
    if (took > 3000) throw new Error(`listed after ${took} ms`);
    await other.context().close();
    await watcher.locator('#who li').filter({ hasText: `late${tag}` }).waitFor({ state: 'detached', timeout: 3000 });
    return [watcher];
  },

  async 'the clock is marked paused while the opponent is away'() {
    const [a, b] = await quickPair();
    await a.locator('#clock').getByText('Time to move').waitFor();
    await b.context().close();
    await a.locator('#clock.paused').getByText('Clock paused (your opponent is away)').waitFor();
    const first = await a.locator('#clock').textContent();
    await a.waitForTimeout(1500);
    if ((await a.locator('#clock').textContent()) !== first) throw new Error('the paused clock ran');
    mkdirSync(screens, { recursive: true });
    await a.screenshot({ path: `${screens}/clock-paused-opponent-away.png` });
    return [a];
  },

  async 'a game on a Fischer clock: the picker, both clocks ticking for the players and a spectator'() {
    const host = await open();
    const picker = host.getByLabel('Clock');
    await picker.selectOption('custom');
    // Out of range: said as an error, nothing sent.
    await host.getByLabel('Minutes').fill('999');
    await host.getByRole('button', { name: 'Create a room' }).click();
    await host.locator('#home-note.error').getByText('from 1 second to 180 minutes').waitFor();
    if ((await host.getByLabel('Minutes').getAttribute('aria-invalid')) !== 'true') throw new Error('the bad box is not marked');
    await host.getByLabel('Minutes').fill('1');
    await host.getByLabel('Increment (s)').fill('2');
    // The choice is kept: a new tab of this browser starts with it.
    const again = await host.context().newPage();
    await again.goto(server);
    await again.getByLabel('Clock').waitFor();
    const kept = [await again.getByLabel('Clock').inputValue(), await again.getByLabel('Minutes').inputValue(), await again.getByLabel('Increment (s)').inputValue()];
    if (kept.join() !== 'custom,1,2') throw new Error(`the picker kept ${kept.join()}`);
    await again.close();
    await host.getByRole('button', { name: 'Create a room' }).click();
    await host.getByText(/Room [A-Z0-9]+ is open \(1\+2\)/).waitFor();
    const link = await inviteLink(host);
    const friend = await open(new URL(link).pathname);
    await friend.getByRole('button', { name: 'Take the seat and play' }).click();
    await says(host, /turn/);
    const watcher = await open(new URL(link).pathname);
    await says(watcher, /to move/);
    const faces = (page) => page.evaluate(() => [1, 2].map((p) => {
      const el = document.getElementById(`clock-${p}`);
      return { text: el.querySelector('.time').textContent, who: el.querySelector('.who').textContent, running: el.classList.contains('running') };
    }));
    // Before each side has moved: both initial times, none running, and the first-move countdown.
    for (const page of [host, friend, watcher]) {
      const f = await faces(page);
      expect('the clocks before the first moves', { texts: f.map((x) => x.text).join(), running: f.some((x) => x.running) }, { texts: '1:00,1:00', running: false });
      if (!f[0].who.startsWith('X ') || !f[1].who.startsWith('O ')) throw new Error(`clock names ${f[0].who} / ${f[1].who}`);
    }
    await host.locator('#clock').getByText('Time for the first move').waitFor();
    const [x, o] = await playOut(host, friend, ['a1', 'b1']);
    // Each side has moved: X's clock runs, on every page, and O's stands.
    const seconds = (t) => t.split(':').reduce((a, v) => a * 60 + Number(v), 0);
    const ticking = async (who, still) => {
      for (const page of [x, o, watcher]) await page.locator(`#clock-${who}.running`).waitFor();
      const before = await Promise.all([x, o, watcher].map(faces));
      await x.waitForTimeout(1300);
      const after = await Promise.all([x, o, watcher].map(faces));
      before.forEach((b, i) => {
        const [was, now] = [b[who - 1].text, after[i][who - 1].text];
        if (!(seconds(now) < seconds(was))) throw new Error(`page ${i}: the running clock went ${was} → ${now}`);
        if (b[still - 1].text !== after[i][still - 1].text) throw new Error(`page ${i}: the other clock moved ${b[still - 1].text} → ${after[i][still - 1].text}`);
        if (after[i][still - 1].running) throw new Error(`page ${i}: both clocks are marked running`);
      });
      return after[0];
    };
    await ticking(1, 2);
    mkdirSync(screens, { recursive: true });
    await x.screenshot({ path: `${screens}/fischer-clocks-1000x800.png` });
    await cell(x, 'a2').click();
    await x.getByRole('button', { name: 'a2 X', exact: true }).waitFor();
    // After X's move O's clock runs, and X's stands with the increment added.
    const f = await ticking(2, 1);
    if (!(seconds(f[0].text) > 59)) throw new Error(`X's clock after the increment: ${f[0].text}`);
    return [host, friend, watcher];
  },

  async 'keyboard play: arrows and Enter'() {
    const [a, b] = await quickPair();
    const aIsX = (await status(a).textContent()).includes('Your turn (X)');
    const x = aIsX ? a : b;
    await cell(x, 'b2').focus();
    await x.keyboard.press('ArrowUp');
    await x.keyboard.press('ArrowLeft');
    // The focus outline of a corner cell is drawn whole, not clipped by the board's frame.
    const clipped = await x.evaluate(() => {
      const cell = document.activeElement;
      const frame = cell.closest('.board-wrap');
      const c = cell.getBoundingClientRect();
      const f = frame.getBoundingClientRect();
      const style = getComputedStyle(cell);
      const reach = parseFloat(style.outlineWidth) + parseFloat(style.outlineOffset);
      return c.left - reach < f.left || c.top - reach < f.top ? `${cell.getAttribute('aria-label')} reach ${reach}` : '';
    });
    if (clipped) throw new Error(`focus outline clipped: ${clipped}`);
    await x.keyboard.press('Enter');
    await x.getByRole('button', { name: 'a1 X', exact: true }).waitFor();
    return [a, b];
  },
};

await runAll(browser, scenarios);
