import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/sdk3 runs under its own config, on Node 22 and the 3.x SDK line (test/sdk3/run.sh).
    exclude: [...configDefaults.exclude, 'test/sdk3/**'],
    testTimeout: 30_000,
  },
});
