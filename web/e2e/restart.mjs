// A server restart under a game in the page: node web/e2e/restart.mjs SERVER_URL
// Prints RESTART when the game is under way; whoever runs it then stops the
// server. Once both pages show their clocks paused for the restart it prints
// START, and the server is started again on the same address and database.
// Both pages must say the server restarted (not in the warning colour),
// keep their seats, and play on. A second game, on a 1+0 Fischer clock,
// rides the same restart: its running clock stands still while the server
// is away (the outage is charged to nobody) and runs again once it is back.
import { chromium } from 'playwright-core';

const [server] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
const says = (page, re) =>
  page.waitForFunction((src) => new RegExp(src).test(document.querySelector('[role=status]').textContent), re.source);
/** Two pages paired by quick match on `clock` (the picker's value); returns them as [x, o]. */
async function pair(names, clock) {
  const pages = [];
  for (const name of names) {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(30000);
    await page.goto(server);
    await page.getByLabel('Your name').fill(name);
    await page.getByLabel('Your name').press('Tab');
    await page.getByLabel('Clock').selectOption(clock);
    await page.getByRole('button', { name: 'Quick match' }).click();
    pages.push(page);
  }
  await says(pages[0], /turn/);
  const xFirst = (await pages[0].getByRole('status').textContent()).includes('Your turn (X)');
  return xFirst ? pages : [pages[1], pages[0]];
}

/** Seconds on X's clock face in `page`. */
const xClock = async (page) => (await page.locator('#clock-1 .time').textContent()).split(':').reduce((a, v) => a * 60 + Number(v), 0);

try {
  const [x, o] = await pair(['rita', 'sam'], 'per-move');
  await x.getByRole('button', { name: 'b2', exact: true }).click();
  await o.getByRole('button', { name: 'b2 X', exact: true }).waitFor();
  for (const page of [x, o]) await page.locator('#clock').getByText('Time to move').waitFor();
  // The timed game: each side's first move, then X's clock runs.
  const [fx, fo] = await pair(['tess', 'uma'], '1+0');
  await fx.getByRole('button', { name: 'b2', exact: true }).click();
  await says(fo, /Your turn/);
  await fo.getByRole('button', { name: 'a1', exact: true }).click();
  await fx.locator('#clock-1.running').waitFor();
  console.log('RESTART');
  for (const page of [x, o]) await page.locator('#clock.paused').getByText('Clock paused (the server is restarting)').waitFor();
  await fx.getByText('Server restarting, reconnecting…').waitFor();
  const held = await xClock(fx);
  await fx.waitForTimeout(1200);
  if ((await xClock(fx)) !== held) throw new Error(`the Fischer clock ran while the server restarted: ${held} → ${await xClock(fx)}`);
  if (process.env.SCREENS) await o.screenshot({ path: `${process.env.SCREENS}/clock-paused-server-restarting.png` });
  console.log('START');
  for (const page of [x, o]) await page.getByText('The server restarted; you are back.').waitFor();
  const [notice, warn] = await x.evaluate(() => [
    getComputedStyle(document.getElementById('conn')).color,
    getComputedStyle(document.querySelector('.clock')).getPropertyValue('--warn'),
  ]);
  const red = await x.evaluate((c) => {
    const probe = document.createElement('span');
    probe.style.color = c;
    document.body.append(probe);
    const rgb = getComputedStyle(probe).color;
    probe.remove();
    return rgb;
  }, warn.trim());
  if (notice === red) throw new Error(`the "you are back" notice is in the warning colour (${notice})`);
  // The Fischer clock runs again, from the time saved with the last move at the most.
  await fx.getByText('The server restarted; you are back.').waitFor();
  await fx.locator('#clock-1.running').waitFor();
  const back = await xClock(fx);
  await fx.waitForTimeout(1300);
  const later = await xClock(fx);
  if (!(later < back && back <= 60 && back > held - 5)) throw new Error(`X's clock: ${held} held, ${back} back, ${later} later`);
  await says(o, /Your turn \(O\)/);
  await o.getByRole('button', { name: 'a1', exact: true }).click();
  await x.getByRole('button', { name: 'a1 O', exact: true }).waitFor();
  console.log('ok - a restart: both pages came back to their seats and played on');
} catch (e) {
  console.log(`not ok - a restart: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
