// The README's screenshots: node web/e2e/screenshots.mjs SERVER_URL OUT_DIR TTT_BINARY
// (scripts/screenshots.sh starts the server and runs this).
import { spawn } from 'node:child_process';
import { chromium } from 'playwright-core';

const [server, out, ttt] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });

async function open(path = '/', viewport = { width: 900, height: 700 }, name) {
  const page = await (await browser.newContext({ viewport, colorScheme: 'light' })).newPage();
  await page.goto(new URL(path, server).href);
  if (name) {
    await page.getByLabel('Your name').fill(name);
    await page.getByLabel('Your name').press('Tab');
  }
  return page;
}

const turn = (page, re) => page.waitForFunction((src) => new RegExp(src).test(document.querySelector('[role=status]').textContent), re.source);
const cell = (page, name) => page.getByRole('button', { name: new RegExp(`^${name}( [XO])?$`) });
const shot = (page, file) => page.screenshot({ path: `${out}/${file}`, fullPage: true });

// Home, with a bot online to challenge.
const bot = spawn(ttt, ['bot', '--server', server.replace(/^http/, 'ws'), '--name', 'deep-blue-bot', '--accept-challenges', '--games', '100']);
const home = await open('/', undefined, 'ann');
await home.locator('#who li').filter({ hasText: 'deep-blue-bot' }).waitFor().catch(async () => {
  await home.getByRole('button', { name: 'Refresh' }).click();
});
await home.getByRole('button', { name: 'Refresh' }).click();
await home.locator('#who li').filter({ hasText: 'deep-blue-bot' }).waitFor();
await shot(home, 'web-home.png');

// Two accounts play 3×3: mid-game, then the end.
const [a, b] = [await open('/#/account'), await open('/#/account')];
for (const [page, name] of [[a, 'alice'], [b, 'bob']]) {
  await page.locator('#register-name').fill(name);
  await page.getByRole('button', { name: 'Register' }).click();
  await page.getByText(`Signed in as ${name}`).waitFor();
  await page.getByRole('link', { name: 'Play' }).click();
  await page.getByRole('button', { name: 'Quick match' }).click();
}
await turn(a, /turn/);
const x = (await a.getByRole('status').textContent()).includes('Your turn (X)') ? a : b;
const o = x === a ? b : a;
for (const [i, c] of ['b2', 'a1', 'c1', 'a3', 'a2'].entries()) {
  const page = i % 2 === 0 ? x : o;
  await turn(page, /Your turn/);
  await cell(page, c).click();
  await page.getByRole('button', { name: `${c} ${'XO'[i % 2]}`, exact: true }).waitFor();
}
await shot(o, 'web-game-3x3.png');
for (const [i, c] of ['c3', 'c2'].entries()) {
  const page = i % 2 === 0 ? o : x;
  await turn(page, /Your turn/);
  await cell(page, c).click();
  await page.getByRole('button', { name: `${c} ${'OX'[i % 2]}`, exact: true }).waitFor();
}
await turn(x, /won|lost|Draw/);
await shot(x, 'web-game-over.png');

// The leaderboard of 3×3 (the record lands a moment after the game).
await a.getByRole('link', { name: 'Leaderboard' }).click();
for (let i = 0; i < 50 && !(await a.locator('#leaderboard td').count()); i++) {
  await a.waitForTimeout(100);
  await a.getByRole('button', { name: 'Show' }).click();
}
await shot(a, 'web-leaderboard.png');

// 15×15, five in a row, against the house: a few moves in.
const big = await open('/', { width: 900, height: 1000 }, 'carol');
await big.locator('#size').selectOption('15');
await big.locator('#win').selectOption('5');
await big.locator('#level').selectOption('heuristic');
await big.getByRole('button', { name: 'Play the house bot' }).click();
for (const c of ['h8', 'i9', 'g7', 'j10']) {
  await turn(big, /Your turn|won|lost/);
  if (!(await big.getByRole('status').textContent()).startsWith('Your turn')) break;
  const target = cell(big, c);
  if (await target.textContent()) continue;
  await target.click();
  await big.waitForTimeout(150);
}
await turn(big, /Your turn|won|lost/);
await shot(big, 'web-game-15x15.png');

// A phone-sized screen, in the dark.
const phone = await (await browser.newContext({ viewport: { width: 375, height: 740 }, colorScheme: 'dark', isMobile: true })).newPage();
await phone.goto(server);
await phone.locator('#level').selectOption('random');
await phone.getByRole('button', { name: 'Play the house bot' }).click();
await turn(phone, /turn/);
if ((await phone.getByRole('status').textContent()).startsWith('Your turn')) await cell(phone, 'b2').click();
await turn(phone, /Your turn|won|lost|Draw/);
await shot(phone, 'web-phone.png');

bot.kill();
await browser.close();
