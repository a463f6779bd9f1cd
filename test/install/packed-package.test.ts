/**
 * Done when of issue 22, on the machine's Node (20 in CI) and the 2.x SDK line: `npm pack`, installed
 * into a fresh project that has its own @opentelemetry/api 1.9.1 and sdk-trace-base 2.x. The 3.x line
 * and API 1.10 on Node 22: test/sdk3/packed-package.test.ts. Installs from the npm registry (cache first).
 */
import * as vitest from 'vitest';
import { packedInstallSuite } from '../helpers/packed-install.js';

packedInstallSuite(vitest, {
  packages: ['@opentelemetry/api@1.9.1', '@opentelemetry/sdk-trace-base@2'],
  apiVersion: '1.9.1',
});
