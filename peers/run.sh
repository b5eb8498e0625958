#!/usr/bin/env bash
# Starts one shipped adapter by name, for scenarios that name it (scenarios/clients.toml):
#   command = ["bash", "peers/run.sh", "groupcache"]
# or, with `build`, only brings build/peers up to date (scenarios/foreign-overhead.toml names
# its library there, and a library peer is checked when the scenario is read).
# The adapters are built into build/peers (ignored by git) by peers/build.sh the first time,
# and again whenever a file under peers/ or the ABI header is newer than the last build, or a
# toolchain or library an adapter needs has appeared or gone since (the stamp lists what was
# found), so .ci/install-peers.sh run after a first build needs no separate build step. The
# build's output goes to stderr: stdout is the process protocol's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/peers"
stamp="$out/.built"
# What this machine has for the adapters (build.sh skips one whose toolchain or library is
# missing): kept in the stamp, so that one installed since the last build is built now.
toolchains() {
    local found
    for found in /usr/include/libmemcached/memcached.h \
            /usr/share/gocode/src/github.com/golang/groupcache \
            /usr/share/java/spymemcached.jar /usr/share/java/guava.jar; do
        [ -e "$found" ] && echo "$found"
    done
    for found in "${CC:-cc}" go javac; do
        command -v "$found" || true
    done
}
stale() {
    [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(toolchains)" ] \
        || [ -n "$(find "$root/peers" "$root/harness/core/native/abi" -type f \
            -newer "$stamp" -not -path '*/node_modules/*' -print -quit)" ]
}
if stale; then
    mkdir -p "$out"
    # Several adapters may start at once: one builds, the others wait for it.
    (
        flock 9
        if stale; then
            bash "$root/peers/build.sh" "$out" >&2
            toolchains > "$stamp"
        fi
    ) 9>"$out/.lock"
fi
# Paths relative to the checkout from here on: a peer may name them in its HELLO, which
# results keep, and results carry no absolute paths.
cd "$root"
case "${1:-}" in
    build) exit 0 ;;  # only the build above: scenarios naming build/peers/ files need it
    groupcache) exec build/peers/groupcache_peer ;;
    spymemcached) exec java -cp build/peers/java:/usr/share/java/spymemcached.jar SpymemcachedPeer ;;
    guava) exec java -cp build/peers/java:/usr/share/java/guava.jar GuavaJumpPeer ;;
    libmemcached) exec build/peers/abi_pipe build/peers/libmemcached_ketama.so ;;
    hashring-js) exec node peers/js/hashring_peer.js ;;
    # kafka-python is installed beside the harness: the harness names its interpreter.
    kafka) exec "${RING_PEER_PYTHON:-python3}" peers/python/kafka_peer.py ;;
    redis) exec python3 peers/python/redis_slots_peer.py ;;
    *)
        echo "peers/run.sh: expected one of build, groupcache, spymemcached, guava," \
            "libmemcached, hashring-js, kafka, redis (got '${1:-}')" >&2
        exit 2
        ;;
esac
