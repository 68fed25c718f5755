// A server restart under a game in the page: node web/e2e/restart.mjs SERVER_URL
// Prints RESTART when the game is under way; whoever runs it then stops the
// server. Once both pages show their clocks paused for the restart it prints
// START, and the server is started again on the same address and database.
// Both pages must say the server restarted (not in the warning colour),
// keep their seats, and play on.
import { chromium } from 'playwright-core';

const [server] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
const says = (page, re) =>
  page.waitForFunction((src) => new RegExp(src).test(document.querySelector('[role=status]').textContent), re.source);
try {
  const pages = [];
  for (const name of ['rita', 'sam']) {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(30000);
    await page.goto(server);
    await page.getByLabel('Your name').fill(name);
    await page.getByLabel('Your name').press('Tab');
    await page.getByRole('button', { name: 'Quick match' }).click();
    pages.push(page);
  }
  await says(pages[0], /turn/);
  const xFirst = (await pages[0].getByRole('status').textContent()).includes('Your turn (X)');
  const [x, o] = xFirst ? pages : [pages[1], pages[0]];
  await x.getByRole('button', { name: 'b2', exact: true }).click();
  await o.getByRole('button', { name: 'b2 X', exact: true }).waitFor();
  for (const page of [x, o]) await page.locator('#clock').getByText('Time to move').waitFor();
  console.log('RESTART');
  for (const page of [x, o]) await page.locator('#clock.paused').getByText('Clock paused (the server is restarting)').waitFor();
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
