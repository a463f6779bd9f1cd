/**
 * The page `toolpath view` writes, opened in a real headless Chromium (found by
 * test/helpers/chromium.ts, driven by playwright-core): it renders, the calls and findings are there,
 * interaction works. Without a Chromium the file is skipped, saying why; under CI it fails instead.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viewCommand } from '../../src/cli/view-command.js';
import { captureDemoTraces } from '../../src/demo/capture.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { findChromium, isCI, launchChromium } from '../helpers/chromium.js';
import { quietIO } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** The one piece of the browser's window the tests use. */
type StyleWindow = { getComputedStyle(element: unknown): { borderTopColor: string } };

const SPANS = new URL('../spans/', import.meta.url);
let dir: string;
let browser: Browser;

const lookup = findChromium();
// A machine without a browser still runs the rest of npm test; CI must run this file (.ci/run installs Chromium).
const skipped = !lookup.found && !isCI();
if (!lookup.found && skipped) console.warn(`test/cli/view-browser.test.ts skipped: ${lookup.reason}`);

const io = quietIO();

/** Writes the page for `args` and opens it in a fresh page; fails the test on any page error. */
async function open(args: string[], out: string): Promise<{ page: Page; errors: string[] }> {
  expect(await viewCommand([...args, '--out', out], io)).toBe(0);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('dialog', (dialog) => {
    errors.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  // Anything fetched would be a leak of the "self-contained" promise.
  page.on('request', (request) => {
    if (request.url() !== pathToFileURL(out).href) errors.push(`request: ${request.url()}`);
  });
  await page.goto(pathToFileURL(out).href);
  return { page, errors };
}

describe.skipIf(skipped)(
  `toolpath view in Chromium${lookup.found ? ` (${lookup.via}: ${lookup.path})` : ` (no Chromium: ${lookup.reason})`}`,
  () => {
    beforeAll(async () => {
      if (!lookup.found) throw new Error(`CI=true: the browser test must run, but ${lookup.reason}`);
      dir = temporaryDir('toolpath-view-browser-');
      await writeFile(join(dir, 'scenario.json'), JSON.stringify(DEMO_SCENARIO));
      for (const trace of await captureDemoTraces()) {
        await writeFile(join(dir, `${trace.conversation.name}.otlp.json`), trace.otlpJson);
      }
      browser = await launchChromium(lookup.path);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
    });

    it('draws the made-up confirmation: nodes, parallel row, findings, details, screenshot', async () => {
      const input = join(dir, 'made-up-confirmation.otlp.json');
      const { page, errors } = await open(
        [input, '-s', join(dir, 'scenario.json')],
        join(dir, 'made-up.html'),
      );

      const nodes = page.locator('.graph .call');
      expect(await nodes.count()).toBe(4);
      const tools = await nodes.locator('.tool').allTextContents();
      expect(tools).toEqual(['get_order', 'get_refund_policy', 'issue_refund', 'send_confirmation']);

      // get_order and get_refund_policy were asked for in one turn: same row, side by side.
      const rowOf = (tool: string) =>
        page.locator('.turn', { has: page.locator('.tool', { hasText: tool }) });
      expect(await rowOf('get_order').getAttribute('data-turn-id')).toBe(
        await rowOf('get_refund_policy').getAttribute('data-turn-id'),
      );
      const first = await rowOf('get_order').locator('.call').nth(0).boundingBox();
      const second = await rowOf('get_order').locator('.call').nth(1).boundingBox();
      expect(first && second && Math.abs(first.y - second.y)).toBe(0);
      expect(first && second && second.x > first.x + first.width).toBe(true);
      // The refund comes in a later row, below.
      const refund = await page.locator('.call', { hasText: 'issue_refund' }).boundingBox();
      expect(refund && first && refund.y > first.y + first.height).toBe(true);

      // The findings are listed, and the calls they name carry the highlight and a marker.
      const findings = page.locator('.finding');
      expect(await findings.count()).toBeGreaterThan(0);
      // The answer's finding first: it names the calls that returned the nearest ids.
      expect(await findings.first().locator('.rule').textContent()).toBe('answer.grounded');
      expect(await findings.nth(1).locator('.rule').textContent()).toMatch(
        /^grounding:send_confirmation\.refundId$/,
      );
      const named = ((await findings.first().getAttribute('data-calls')) ?? '').split(' ');
      expect(named.length).toBeGreaterThan(0);
      for (const id of named) {
        const node = page.locator(`.call[data-call-id="${id}"]`);
        await expect.poll(() => node.getAttribute('class')).toContain('flagged');
        expect(await node.locator('.marker').count()).toBe(1);
      }

      // Clicking the finding highlights its calls (and only those).
      await findings.first().click();
      const focused = await page
        .locator('.graph .call.focus')
        .evaluateAll((els) => els.map((el) => el.getAttribute('data-call-id')));
      expect(focused.sort()).toEqual([...named].sort());

      // Hovering a call shows its arguments; clicking pins it.
      await page.locator('.call', { hasText: 'issue_refund' }).hover();
      expect(await page.locator('#details h3').textContent()).toBe('issue_refund · ok');
      expect(await page.locator('#details pre.args').textContent()).toContain('"orderId"');
      await page.locator('.call', { hasText: 'get_order' }).click();
      await page.mouse.move(0, 0);
      expect(await page.locator('#details h3').textContent()).toBe('get_order · ok');
      expect(await page.locator('.call.selected .tool').textContent()).toBe('get_order');
      expect(await page.locator('.call', { hasText: 'get_order' }).getAttribute('title')).toMatch(
        /^get_order \(call_\w+\): ok\nargs: \{/,
      );

      const shot = join(dir, 'made-up.png');
      await page.screenshot({ path: shot, fullPage: true });
      if (process.env.TOOLPATH_VIEW_SHOTS)
        await page.screenshot({ path: join(process.env.TOOLPATH_VIEW_SHOTS, 'made-up.png'), fullPage: true });
      expect((await stat(shot)).size).toBeGreaterThan(20_000);
      expect(errors).toEqual([]);
      await page.close();
    });

    it.each([700, 1400])(
      'at %i px wide: nothing overflows its box, no word is cut, turns named as drawn',
      async (width) => {
        const input = join(dir, 'made-up-confirmation.otlp.json');
        const { page, errors } = await open(
          [input, '-s', join(dir, 'scenario.json')],
          join(dir, `w${width}.html`),
        );
        await page.setViewportSize({ width, height: 900 });
        const layout = await page.evaluate(() => {
          const doc = globalThis as unknown as {
            document: {
              documentElement: { scrollWidth: number };
              querySelectorAll(s: string): ArrayLike<Element>;
            };
            innerWidth: number;
          };
          type Element = {
            closest(s: string): Element | null;
            getBoundingClientRect(): { left: number; right: number };
            scrollWidth: number;
            clientWidth: number;
          };
          const outside: string[] = [];
          for (const call of Array.from(doc.document.querySelectorAll('.call, .finding'))) {
            const box = call.closest('.run, section');
            if (!box) continue;
            const inner = call.getBoundingClientRect();
            const outer = box.getBoundingClientRect();
            if (inner.right > outer.right + 0.5 || inner.left < outer.left - 0.5)
              outside.push(String(inner.right));
          }
          return {
            scrollWidth: doc.document.documentElement.scrollWidth,
            innerWidth: doc.innerWidth,
            outside,
          };
        });
        expect(layout.scrollWidth).toBeLessThanOrEqual(layout.innerWidth);
        expect(layout.outside).toEqual([]);
        // Breaking anywhere only where a word cannot fit: never break-all, which cuts every word.
        const breaks = await page.locator('#details, .finding, .call').evaluateAll((elements) =>
          elements.map(
            (e) =>
              (
                globalThis as unknown as {
                  getComputedStyle(e: unknown): { wordBreak: string };
                }
              ).getComputedStyle(e).wordBreak,
          ),
        );
        expect(breaks.filter((value) => value === 'break-all')).toEqual([]);
        await page.locator('.call', { hasText: 'issue_refund' }).click();
        const fields = await page.locator('#details dl').textContent();
        expect(fields).toContain('turn 2');
        expect(fields).not.toMatch(/turn:/);
        await page.screenshot({ path: join(dir, `view-${width}.png`), fullPage: true });
        expect(errors).toEqual([]);
        await page.close();
      },
    );

    it('nests a sub-agent run under its parent and colours a failed call', async () => {
      const input = new URL('google-adk-tool-error.otlp.json', SPANS).pathname;
      const { page, errors } = await open([input], join(dir, 'adk-error.html'));
      expect(await page.locator('.graph .call').count()).toBe(2);
      const sub = page.locator('.run .run.sub');
      expect(await sub.count()).toBe(1);
      expect(await sub.locator('.call').count()).toBeGreaterThan(0);
      const failed = page.locator('.graph .call.error');
      expect(await failed.count()).toBe(1);
      // The tests compile without the DOM library: the page's window, typed for this one use.
      const border = await failed.evaluate(
        (el) => (globalThis as unknown as StyleWindow).getComputedStyle(el).borderTopColor,
      );
      expect(border).toBe('rgb(207, 34, 46)');
      await failed.click();
      expect(await page.locator('#details h3').textContent()).toMatch(/ · error/);
      await page.screenshot({
        path: join(process.env.TOOLPATH_VIEW_SHOTS ?? dir, 'adk-error.png'),
        fullPage: true,
      });
      expect(errors).toEqual([]);
      await page.close();
    });

    it('a hostile argument stays text in the browser: no element, no script run', async () => {
      const input = join(dir, 'hostile.json');
      const hostile = '</script><img src=x onerror="alert(1)">';
      await writeFile(
        input,
        JSON.stringify([
          { kind: 'call', id: 'c1', tool: 'get_order', args: { note: hostile } },
          { kind: 'result', callId: 'c1', ok: true, output: { ok: true } },
        ]),
      );
      const { page, errors } = await open([input], join(dir, 'hostile.html'));
      expect(await page.locator('img').count()).toBe(0);
      await page.locator('.graph .call').click();
      expect(await page.locator('#details pre.args').textContent()).toContain(JSON.stringify(hostile));
      expect(errors).toEqual([]);
      await page.close();
    });
  },
);
