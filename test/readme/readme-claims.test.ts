/**
 * What the README and the files `init` writes say of each other, checked against the real thing:
 * the paths its snippets load are the ones `init` writes, the sections the starter scenario
 * points at exist, the examples install toolpath the way the README does, the exit status it
 * lists is what eval returns, and the browser tests it describes are the files there are.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { initFiles } from '../../src/cli/init-command.js';
import { SCENARIO_PATH, STARTER_SCENARIO } from '../../src/cli/init-templates.js';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const HEADINGS = [...README.matchAll(/^#{2,3} (.+)$/gm)].map(([, heading]) => heading?.trim());

/** The code of the README's fenced blocks in `language`. */
function blocks(language: string): string[] {
  const fence = new RegExp(`^\`\`\`${language}\\s*\\n([\\s\\S]*?)^\`\`\``, 'gm');
  return [...README.matchAll(fence)].map(([, body]) => body ?? '');
}

describe('the README and what init writes', () => {
  it('every scenario file a ts snippet loads is one init writes', () => {
    const written = initFiles().map(({ path }) => path);
    const loaded = blocks('ts').flatMap((code) => [
      ...[...code.matchAll(/scenarios: \[([^\]]*)\]/g)].flatMap(([, list]) =>
        [...(list ?? '').matchAll(/'([^']+)'/g)].map(([, path]) => path),
      ),
      ...[...code.matchAll(/const scenario = '([^']+)'/g)].map(([, path]) => path),
    ]);
    expect(loaded.length).toBeGreaterThanOrEqual(2);
    for (const path of loaded) expect(written).toContain(path);
    expect(loaded).toContain(SCENARIO_PATH);
  });

  it('the README sections the starter scenario points at exist', () => {
    const comments = STARTER_SCENARIO.split('\n')
      .filter((line) => line.startsWith('#'))
      .map((line) => line.replace(/^#\s?/, ''))
      .join(' ');
    const pointers = [...comments.matchAll(/the README, "([^"]+)"/g)].map(([, section]) => section);
    expect(pointers).not.toEqual([]);
    for (const section of pointers) expect(HEADINGS).toContain(section);
  });

  it('no example installs toolpath from the registry, where it is not', () => {
    const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true }).filter((entry) =>
      entry.isDirectory(),
    );
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      let text: string;
      try {
        text = readFileSync(join(ROOT, 'examples', example.name, 'README.md'), 'utf8');
      } catch {
        continue;
      }
      // `npm install toolpath` or `npm i -D toolpath`, with no tarball, path or git URL after it.
      expect(text, example.name).not.toMatch(/npm (?:i|install|add)(?: -[DO])? toolpath(?![@\w./-])/);
    }
  });

  it('the exit status it lists for "no scenario applied" is what eval returns', async () => {
    expect(README).toMatch(/\*\*1\*\*[^*]*no scenario applied\s+to any of them/);
    const dir = temporaryDir('toolpath-readme-claims-');
    const elsewhere = join(dir, 'billing.yaml');
    writeFileSync(elsewhere, 'id: billing\nappliesTo: { agent: billing-agent }\ntools: { allowed: [x] }\n');
    const good = fileURLToPath(new URL('../spans/demo-agent-good-refund.otlp.json', import.meta.url));
    const run = await runCli(['eval', '-s', elsewhere, good]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('NOTHING EVALUATED');
  });

  it('the browser tests it describes are the files there are, and it says what CI=true does', () => {
    const files = readdirSync(join(ROOT, 'test/cli')).filter((name) => name.endsWith('-browser.test.ts'));
    expect(files.length).toBe(2);
    expect(README).toContain('view pages in Chromium (two files,');
    for (const file of files) expect(README).toContain(`test/cli/${file}`);
    expect(README).toMatch(/under `CI=true` they\s+fail instead/);
  });
});
