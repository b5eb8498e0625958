#!/usr/bin/env bash
# Installs what the integration tests need from the system: real peers our
# constructions are checked against, a browser for the HTML pages, and valgrind
# (the counts metric and tox -e bench-counts).
# Idempotent and quiet: installs only what is not on PATH already. Python
# packages (uhashring, selenium) come with the `test` extra.
set -euo pipefail

# Debian packages the tests need: nginx (a real peer of our nginx ring; the tests start
# their own, the packaged service need not run) and chromium with its driver (the HTML
# pages are tested in a real headless browser), and valgrind (callgrind counts
# instructions and simulated cache misses; its header must be there when the package is
# built, so this runs before any pip install).
missing=()
command -v nginx >/dev/null 2>&1 || missing+=(nginx)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
