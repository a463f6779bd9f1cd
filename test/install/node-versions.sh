#!/usr/bin/env bash
# test/install/package-managers.test.ts (the packed toolpath with npm, pnpm and yarn) on the lowest
# Node toolpath declares (package.json engines, 20.19) and on Node 22, each Node a binary from the
# npm registry's `node` package (as test/sdk3/run.sh gets Node 22), installed into a temporary
# folder. The root's Vitest runs the file with that binary first on PATH, so npm, pnpm, yarn and
# the generated test run on it. About 2 minutes a Node. Usage: bash test/install/node-versions.sh
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
nodes="$(mktemp -d)"
trap 'rm -rf "$nodes"' EXIT
lowest="$(node -p 'require(process.argv[1]).engines.node.replace(/^>=/, "")' "$repo/package.json")"
case "$lowest" in *.*.*) ;; *) lowest="$lowest.0" ;; esac
for version in "$lowest" 22; do
  dir="$nodes/$version"
  mkdir -p "$dir"
  (cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "node@$version" >/dev/null)
  bin="$(cd "$dir/node_modules/node/bin" && pwd)"
  echo "node-versions: Node $("$bin/node" --version)"
  (cd "$repo" && PATH="$bin:$PATH" "$bin/node" node_modules/vitest/vitest.mjs run test/install/package-managers.test.ts)
done
