// What the browser scenarios share (browser.mjs, tournament.mjs): Debian's
// chromium driven by playwright-core, each page in a fresh browser context,
// the page's live region and board cells as a player reads them, a game
// played out on random free cells, and the run of named scenarios, which
// saves a screenshot of every page a failing one opened under the
// workspace's target/web-failures/ (ignored by git, wherever this is run
// from). Screenshots that show what a scenario checks go to $SCREENS, or
// target/web-screens/.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const TIMEOUT = 15000;
const target = fileURLToPath(new URL('../../target/', import.meta.url));
const failures = `${target}web-failures`;

/** Where the screenshots a scenario takes on purpose go. */
export const screens = process.env.SCREENS || `${target}web-screens`;

/**
 * Launches chromium ($CHROMIUM, else Debian's); returns it with `open`,
 * which opens `path` of `server` in a fresh context (its own storage, and a
 * clipboard to read) at `viewport`.
 */
export async function launch(server) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  async function open(path = '/', viewport = { width: 1000, height: 800 }) {
    const context = await browser.newContext({ viewport, permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    await page.goto(new URL(path, server).href);
    return page;
  }
  return { browser, open };
}

/** The page's live region: whose turn it is, or how the game ended. */
export const status = (page) => page.getByRole('status');

/** Waits until the page's live region says `text` (a substring or a RegExp). */
export async function says(page, text) {
  await page.waitForFunction(
    ([t, isRe]) => {
      const s = document.querySelector('[role=status]')?.textContent ?? '';
      return isRe ? new RegExp(t).test(s) : s.includes(t);
    },
    [text instanceof RegExp ? text.source : text, text instanceof RegExp],
  );
}

/** The board's cell `name` (`b2`), empty or marked. */
export const cell = (page, name) => page.getByRole('button', { name: new RegExp(`^${name}( [XO])?$`) });

/** Plays random free cells whenever it is this page's turn, until the game ends; returns how it ended. */
export async function playToTheEnd(page) {
  for (;;) {
    await says(page, /Your turn|won|lost|Draw|No winner|Aborted/);
    const text = await status(page).textContent();
    if (!text.startsWith('Your turn')) return text;
    const free = await page.locator('button.cell').evaluateAll((bs) => bs.filter((b) => !b.textContent).map((b) => b.getAttribute('aria-label')));
    const pick = free[Math.floor(Math.random() * free.length)];
    const mark = text.includes('(X)') ? 'X' : 'O';
    await cell(page, pick).click();
    await page.getByRole('button', { name: `${pick} ${mark}`, exact: true }).waitFor();
  }
}

/**
 * Runs each of `scenarios` (name → async function) in turn, printing `ok -`
 * or `not ok -` for each, closes `browser`, and exits 1 if any failed.
 */
export async function runAll(browser, scenarios) {
  let failed = 0;
  for (const [name, run] of Object.entries(scenarios)) {
    const before = new Set(browser.contexts());
    try {
      await run();
      console.log(`ok - ${name}`);
    } catch (e) {
      failed += 1;
      console.log(`not ok - ${name}: ${e.message}`);
      mkdirSync(failures, { recursive: true });
      const pages = browser.contexts().filter((c) => !before.has(c)).flatMap((c) => c.pages());
      for (const [i, page] of pages.entries()) {
        const file = `${failures}/${name.replace(/\W+/g, '-')}-${i}.png`;
        await page.screenshot({ path: file, fullPage: true }).catch(() => {});
        console.log(`  screenshot: ${file}`);
      }
    } finally {
      for (const c of browser.contexts()) if (!before.has(c)) await c.close();
    }
  }
  await browser.close();
  process.exit(failed ? 1 : 0);
}
