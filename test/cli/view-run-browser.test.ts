/**
 * The page `toolpath view` writes for a run, opened in a real headless Chromium (found by
 * test/helpers/chromium.ts, driven by playwright-core; without one the file is skipped, saying
 * why, and under CI it fails instead): 200 recorded refund traces judged by two scenarios,
 * the gates, the table, its filters, and a row opening its trajectory's DAG. Screenshots go to
 * TOOLPATH_VIEW_SHOTS when set.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewCommand } from '../../src/cli/view-command.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { findChromium, isCI, launchChromium } from '../helpers/chromium.js';
import { quietIO } from '../helpers/cli.js';
import { captureRefundRun, REFUND_RUN_ASSERTIONS, REFUND_RUN_VERDICTS } from '../helpers/refund-run.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
let browser: Browser;
let traces: string[];

const lookup = findChromium();
// A machine without a browser still runs the rest of npm test; CI must run this file (.ci/run installs Chromium).
const skipped = !lookup.found && !isCI();
if (!lookup.found && skipped) console.warn(`test/cli/view-run-browser.test.ts skipped: ${lookup.reason}`);

const io = quietIO();

async function open(args: string[], out: string, hash = ''): Promise<{ page: Page; errors: string[] }> {
  expect(await viewCommand([...args, '--out', out], io)).toBe(0);
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  // Anything fetched would break the "self-contained" promise.
  page.on('request', (request) => {
    if (!request.url().startsWith(pathToFileURL(out).href)) errors.push(`request: ${request.url()}`);
  });
  await page.goto(pathToFileURL(out).href + hash);
  return { page, errors };
}

async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  const path = join(process.env.TOOLPATH_VIEW_SHOTS ?? dir, name);
  await page.screenshot({ path, fullPage });
  expect((await stat(path)).size).toBeGreaterThan(20_000);
}

const shownText = (page: Page) => page.locator('#shown').textContent();
const visibleRows = (page: Page) => page.locator('tr.unit:visible').count();

describe.skipIf(skipped)(
  `the run page${lookup.found ? ` (${lookup.via}: ${lookup.path})` : ` (no Chromium: ${lookup.reason})`}`,
  () => {
    beforeAll(async () => {
      if (!lookup.found) throw new Error(`CI=true: the browser test must run, but ${lookup.reason}`);
      dir = temporaryDir('toolpath-view-run-');
      if (process.env.TOOLPATH_VIEW_SHOTS) await mkdir(process.env.TOOLPATH_VIEW_SHOTS, { recursive: true });
      await writeFile(
        join(dir, 'refund.json'),
        JSON.stringify({ ...REFUND_RUN_ASSERTIONS, min_pass_rate: 0.6 }),
      );
      await writeFile(join(dir, 'demo.json'), JSON.stringify(DEMO_SCENARIO));
      // 200 real traces: the refund run recorded twenty times over.
      traces = [];
      for (let round = 0; round < 20; round++) {
        for (const { file, otlpJson } of await captureRefundRun()) {
          const path = join(dir, `${String(round).padStart(2, '0')}-${file}`);
          await writeFile(path, otlpJson);
          traces.push(path);
        }
      }
      browser = await launchChromium(lookup.path);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
    });

    describe('the run page in Chromium, 200 traces', () => {
      const scenarios = () => ['-s', join(dir, 'refund.json'), '-s', join(dir, 'demo.json')];

      it('shows each scenario with its pass rate and gate, and a row per trace and scenario', async () => {
        const { page, errors } = await open([...scenarios(), ...traces], join(dir, 'run.html'));
        expect(await page.locator('h1').textContent()).toBe('toolpath · run of 400 units over 200 traces');
        const cards = page.locator('.gate');
        expect(await cards.count()).toBe(2);
        const refund = page.locator('.gate[data-scenario="refund.run"]');
        expect(await refund.locator('.rate-value').textContent()).toBe('0.6');
        expect(await refund.locator('.badge').textContent()).toBe('GATE MET');
        expect(await refund.locator('.counts').textContent()).toBe(
          '120 of 200 traces passed · 80 failed · 0 inconclusive',
        );
        expect(await refund.locator('.reason').textContent()).toBe(
          'pass rate 120/200 = 0.6, at least the min pass rate 0.6',
        );
        const demo = page.locator('.gate[data-scenario="demo.support.refund"]');
        expect(await demo.locator('.badge').textContent()).toBe('NOT ALL PASSED');

        expect(await page.locator('tr.unit').count()).toBe(400);
        expect(await shownText(page)).toBe('400 of 400 shown');
        // Rows are compact enough to read many at once: a few dozen in one screen.
        const first = await page.locator('tr.unit').nth(0).boundingBox();
        expect(first?.height).toBeLessThan(40);
        await shot(page, 'run-200.png');
        expect(errors).toEqual([]);
        await page.close();
      }, 60_000);

      it('filters by scenario, by verdict and by text, and says how many are shown', async () => {
        const { page, errors } = await open([...scenarios(), ...traces], join(dir, 'run-filters.html'));
        await page.locator('#filter-scenario').selectOption('refund.run');
        expect(await shownText(page)).toBe('200 of 400 shown');
        expect(await page.locator('tbody[data-group="demo.support.refund"]').isHidden()).toBe(true);

        // Failures only: 4 of every 10.
        await page.locator('input[name=verdict][value=pass]').uncheck();
        expect(await shownText(page)).toBe('80 of 400 shown');
        const verdicts = await page
          .locator('tr.unit:visible')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-verdict')));
        expect(new Set(verdicts)).toEqual(new Set(['fail']));
        const failing = Object.entries(REFUND_RUN_VERDICTS).filter(
          ([, verdict]) => verdict === 'fail',
        ).length;
        expect(verdicts).toHaveLength(failing * 20);
        await shot(page, 'run-200-failures.png');

        // Text matches files, tools and rules: the traces that called transfer_to_human.
        await page.locator('#filter-text').fill('transfer_to_human');
        expect(await shownText(page)).toBe('20 of 400 shown');
        expect(await page.locator('tr.unit:visible .src').first().textContent()).toMatch(
          /escalates-to-human/,
        );
        await page.locator('#filter-text').fill('tools.required escalates');
        expect(await visibleRows(page)).toBe(20);
        await page.locator('#filter-text').fill('no such thing');
        expect(await shownText(page)).toBe('0 of 400 shown');
        expect(await page.locator('#none-shown').isVisible()).toBe(true);

        await page.locator('#filter-text').fill('');
        await page.locator('input[name=verdict][value=pass]').check();
        await page.locator('#filter-scenario').selectOption('');
        expect(await shownText(page)).toBe('400 of 400 shown');
        expect(errors).toEqual([]);
        await page.close();
      }, 60_000);

      it("a row opens its trajectory's DAG, with the findings on the calls they name", async () => {
        const { page, errors } = await open([...scenarios(), ...traces], join(dir, 'run-open.html'));
        await page.locator('#filter-scenario').selectOption('refund.run');
        await page.locator('#filter-text').fill('refund-before-policy');
        const row = page.locator('tr.unit:visible').first();
        expect(await row.getAttribute('data-verdict')).toBe('fail');
        await row.locator('button.open').click();
        const dialog = page.locator('dialog#dag');
        expect(await dialog.isVisible()).toBe(true);
        expect(await dialog.locator('.graph .call .tool').allTextContents()).toEqual([
          'get_order',
          'issue_refund',
          'get_refund_policy',
          'send_confirmation',
        ]);
        expect(await dialog.locator('.dag-head .verdict.fail').first().textContent()).toBe('FAIL refund.run');
        const finding = dialog.locator('.finding').first();
        await finding.click();
        const named = ((await finding.getAttribute('data-calls')) ?? '').split(' ').filter(Boolean);
        expect(named.length).toBeGreaterThan(0);
        const focused = await dialog
          .locator('.graph .call.focus')
          .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-call-id')));
        expect(focused.sort()).toEqual([...named].sort());
        await dialog.locator('.call', { hasText: 'issue_refund' }).hover();
        expect(await dialog.locator('#details h3').textContent()).toBe('issue_refund · ok');
        expect(await dialog.locator('#details pre.args').textContent()).toContain('"orderId"');
        await shot(page, 'run-200-dag.png');

        await dialog.locator('.dag-close').click();
        expect(await dialog.isVisible()).toBe(false);
        // Escape closes it too, and a #unit-N link opens one directly.
        await page.locator('tr.unit:visible').nth(0).click();
        await page.keyboard.press('Escape');
        expect(await dialog.isVisible()).toBe(false);
        expect(errors).toEqual([]);
        await page.close();

        // 1-based, as the table counts: the tenth row.
        const linked = await open([...scenarios(), ...traces], join(dir, 'run-linked.html'), '#unit-10');
        expect(await linked.page.locator('dialog#dag').isVisible()).toBe(true);
        expect(await linked.page.locator('dialog#dag .graph .call .tool').allTextContents()).toContain(
          'transfer_to_human',
        );
        expect(linked.errors).toEqual([]);
        await linked.page.close();
      }, 60_000);
    });

    describe('the run page of a dataset', () => {
      it("lists rows and trials; a conversation's traces are each drawn from the dialog", async () => {
        const dataset = join(dir, 'rows.jsonl');
        const rows = [
          { id: 'conversation', traces: [traces[0], traces[9]], assertions: REFUND_RUN_ASSERTIONS },
          { id: 'task', trials: [[traces[1]], [traces[2]]], assertions: REFUND_RUN_ASSERTIONS },
        ];
        await writeFile(dataset, rows.map((row) => JSON.stringify(row)).join('\n'));
        const { page, errors } = await open(['--dataset', dataset], join(dir, 'rows.html'));
        expect(await page.locator('tr.unit button.open').allTextContents()).toEqual([
          'row conversation',
          'row task · trial 1',
          'row task · trial 2',
        ]);
        expect(await page.locator('.gate .counts').textContent()).toBe(
          '1 of 3 trials passed · 2 failed · 0 inconclusive',
        );
        await page.locator('tr.unit').first().click();
        const nav = page.locator('dialog#dag .dag-nav button');
        expect(await nav.count()).toBe(2);
        expect(await page.locator('dialog#dag .graph .call .tool').allTextContents()).not.toContain(
          'transfer_to_human',
        );
        await nav.nth(1).click();
        expect(await page.locator('dialog#dag .graph .call .tool').allTextContents()).toContain(
          'transfer_to_human',
        );
        expect(await nav.nth(1).getAttribute('class')).toContain('current');
        await shot(page, 'run-dataset-dag.png');
        expect(errors).toEqual([]);
        await page.close();
      }, 60_000);
    });
  },
);
