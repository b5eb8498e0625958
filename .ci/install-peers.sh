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
# Foreign peers (peers/, built offline by peers/build.sh at test time): libmemcached's ketama
# through the C ABI, groupcache's consistenthash in Go 1.19, and for the Java adapters
# spymemcached 2.12.3 and Guava 31.1.
[ -f /usr/include/libmemcached/memcached.h ] || missing+=(libmemcached-dev)
command -v go >/dev/null 2>&1 || missing+=(golang-go)
[ -d /usr/share/gocode/src/github.com/golang/groupcache ] \
    || missing+=(golang-github-golang-groupcache-dev)
[ -f /usr/share/java/spymemcached.jar ] || missing+=(libspymemcached-java)
[ -f /usr/share/java/guava.jar ] || missing+=(libguava-java)
# Real clients routed live (tests/live/test_clients_live.py, started on loopback by the tests):
# Redis Cluster's key slots (redis-server and redis-cli 7.0), and twemproxy 0.5.0
# (nutcracker) in front of memcached 1.6 instances.
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
command -v memcached >/dev/null 2>&1 || missing+=(memcached)
command -v nutcracker >/dev/null 2>&1 || missing+=(nutcracker)
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm hashring 3.2.0 for peers/js/hashring_peer.js, into peers/js/node_modules (ignored by
# git); node 20 is in the machine image.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -f "$root/peers/js/node_modules/hashring/package.json" ]; then
    npm install --silent --no-audit --no-fund --no-save --prefix "$root/peers/js" \
        hashring@3.2.0 >/dev/null
fi
