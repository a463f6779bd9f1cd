/**
 * Done when of issue 22 on the 3.x line, in the sdk3 run (Node 22, test/sdk3/run.sh): `npm pack`,
 * installed into a fresh project that has its own @opentelemetry/api 1.10 and sdk-trace 3.x (npm runs
 * on Node 22 too, so it picks the 3.x line where a range allows both). The 2.x line:
 * test/install/packed-package.test.ts.
 */
import * as vitest from 'vitest';
import { packedInstallSuite } from '../helpers/packed-install.js';

packedInstallSuite(vitest, {
  packages: ['@opentelemetry/api@1.10', '@opentelemetry/sdk-trace@3'],
  apiVersion: '1.10.0',
});
