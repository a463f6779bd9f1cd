#!/usr/bin/env bash
# The processor tests on Node 22 and the OTel JS 3.x SDK line: installs test/sdk3's own lockfile (the 3.x
# packages and the `node` package, which brings the Node 22 binary), then runs the root's Vitest with that
# binary on test/sdk3/vitest.config.ts (which says how the imports resolve). Needs the root's install
# (Vitest). Arguments go to `vitest run`; the exit code is Vitest's.
set -euo pipefail
cd "$(dirname "$0")/../.."
# npm runs on the machine's Node (20): the 3.x packages' engines (>=22.15) would warn for each one.
npm ci --prefix test/sdk3 --no-audit --no-fund --loglevel=error
node22=test/sdk3/node_modules/node/bin/node
echo "sdk3: $("$node22" --version), @opentelemetry/sdk-trace $(
  "$node22" -p 'require("./test/sdk3/node_modules/@opentelemetry/sdk-trace/package.json").version'
)"
exec "$node22" node_modules/vitest/vitest.mjs run --config test/sdk3/vitest.config.ts "$@"
