#!/usr/bin/env bash
# Installs the real peers the integration tests check our constructions against.
# Idempotent and quiet: does nothing when nginx is already on PATH. uhashring
# comes with the `test` extra; only nginx needs the system package manager.
set -euo pipefail

# Debian packages the tests need: nginx (a real peer of our nginx ring; the tests start
# their own, the packaged service need not run) and chromium with its driver (the HTML
# pages are tested in a real headless browser).
missing=()
command -v nginx >/dev/null 2>&1 || missing+=(nginx)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
