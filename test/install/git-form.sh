#!/usr/bin/env bash
# The git form of "Add toolpath to your project" (README), as a user runs it: npm installs toolpath
# from a git URL and its `prepare` script builds dist/. No git host is reachable here, so the URL is
# git+file:// of this checkout's committed HEAD. A fresh project with its own @opentelemetry/api 1.9.1
# and sdk-trace-base 2.x; then one API copy in node_modules, `npx toolpath init`, the install command
# it prints, and the test it wrote. Takes about 3 minutes: npm installs toolpath's dev dependencies
# to build it. Not part of npm test for that reason (docs/packaging.md). Usage: bash test/install/git-form.sh
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
commit="$(git -C "$repo" rev-parse HEAD)"
project="$(mktemp -d)"
trap 'rm -rf "$project"' EXIT
cd "$project"
export npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false NO_COLOR=1
npm init -y >/dev/null
npm install --loglevel=error @opentelemetry/api@1.9.1 '@opentelemetry/sdk-trace-base@2'
npm install -D "git+file://$repo#$commit"
spec="$(node -p 'require("./package.json").devDependencies.toolpath')"
echo "package.json: toolpath $spec"
case "$spec" in git+file:*) ;; *) echo "git-form: expected a git+file: spec" >&2; exit 1 ;; esac
[ -f node_modules/toolpath/dist/bin/toolpath.js ] || { echo "git-form: prepare did not build dist/" >&2; exit 1; }
copies="$(find node_modules -path '*/@opentelemetry/api/package.json' | xargs -n1 node -p 'require(require("path").resolve(process.argv[1])).version' | sort | tr '\n' ' ')"
[ "$copies" = "1.9.1 " ] || { echo "git-form: expected one @opentelemetry/api (1.9.1), found: $copies" >&2; exit 1; }
npx toolpath init | tee init.out
# The install commands init printed: the lines between "next:" and "npx vitest run".
commands="$(sed -n '/^next:/,/npx vitest run/p' init.out | sed -n 's/^ *\(npm .*\)$/\1/p')"
case "$commands" in "npm i -D 'toolpath@$spec' vitest") ;; *) echo "git-form: init printed: $commands" >&2; exit 1 ;; esac
sh -c "$commands"
npx vitest run test/toolpath.test.ts
echo "git-form: ok ($spec)"
