#!/usr/bin/env bash
# Is the committed bundle (workbench/labextensions/lithify-workbench, what users get without
# Node) the one this source builds? Builds a clean copy in a scratch folder (npm ci from the lock
# file, tsc, @jupyter/builder) and compares it byte for byte with the committed one.
#
#   check-bundle.sh            compare; exit 1 with the files that differ and how to fix it
#   check-bundle.sh --update   replace the committed bundle with the clean build
#
# The scratch folder mirrors the repository's layout (extensions/jupyterlab-lithify and
# workbench/labextensions side by side), so the build writes where package.json says.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
committed="$repo/workbench/labextensions/lithify-workbench"
fix="extensions/jupyterlab-lithify/check-bundle.sh --update, then commit workbench/labextensions/lithify-workbench (git add -A it: the old hashed file names go)"

for tool in node npm; do
    if ! command -v "$tool" >/dev/null; then
        echo "check-bundle: $tool is not installed; install Node.js and npm (Debian: apt-get install nodejs npm)" >&2
        exit 2
    fi
done
# rspack 2 (under @jupyter/builder) runs on Node ^20.19 or >= 22.12
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
              process.exit(a > 22 || (a === 22 && b >= 12) || (a === 20 && b >= 19) ? 0 : 1)'; then
    echo "check-bundle: the extension builds with Node ^20.19 or >= 22.12, this is Node $(node --version);" \
        "install a newer Node.js (Debian 12's own nodejs is 18)" >&2
    exit 2
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
src="$scratch/extensions/jupyterlab-lithify"
mkdir -p "$src"
tar -C "$here" --exclude=./node_modules --exclude=./lib -cf - . | tar -C "$src" -xf -
if ! (cd "$src" && npm ci --no-audit --no-fund --ignore-scripts && npm run build) >"$scratch/build.log" 2>&1; then
    cat "$scratch/build.log" >&2
    echo "check-bundle: the extension did not build (above)" >&2
    exit 2
fi
built="$scratch/workbench/labextensions/lithify-workbench"

if [ "${1:-}" = "--update" ]; then
    rm -rf "$committed"
    cp -R "$built" "$committed"
    echo "check-bundle: $committed is the clean build now; commit it"
    exit 0
fi
if diff -r "$built" "$committed" >/dev/null; then
    echo "check-bundle: the committed bundle is what the source builds"
    exit 0
fi
{
    echo "check-bundle: the committed bundle is not what extensions/jupyterlab-lithify builds:"
    diff -rq "$built" "$committed" | sed -e "s|$built|built|g" -e "s|$committed|committed|g" -e 's/^/  /'
    echo "The source changed without a rebuild (or the lock file did). Fix: $fix"
} >&2
exit 1
