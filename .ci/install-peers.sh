#!/usr/bin/env bash
# Installs what the build and the integration tests need from the system: the C
# libraries the point generator links (cext/generate.c: OpenSSL's libcrypto for BLAKE2b
# and MD5, zlib for CRC-32, headers included; the machine image ships them, this makes
# sure), valgrind (the counts metric and tox -e bench-counts; its header must be there
# when the package is built, so this runs before any pip install), real peers our
# constructions are checked against, and a browser for the HTML pages. Idempotent and
# quiet: installs only what is missing. Python packages (uhashring, selenium, ...) come
# with the `test` extra.
set -euo pipefail

# nginx and haproxy: real peers of our nginx and haproxy rings (the tests start their own,
# the packaged services need not run); chromium and its driver: the HTML pages are tested
# in a real browser.
missing=()
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v nginx >/dev/null 2>&1 || missing+=(nginx)
command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
