#!/usr/bin/env bash
# Builds the shipped foreign-peer adapters into OUT (default build/peers, ignored by git),
# offline, from what .ci/install-peers.sh installs. Each adapter whose toolchain or library
# is missing is skipped with a line saying so; the tests say which they need.
#   bash peers/build.sh [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-build/peers}"
mkdir -p "$out"
abi="$here/../harness/core/native/abi"
cc="${CC:-cc}"
if [ -f /usr/include/libmemcached/memcached.h ]; then
    "$cc" -O2 -Wall -Wextra -Werror -shared -fPIC -I "$abi" "$here/c/libmemcached_ketama.c" \
        -lmemcached -o "$out/libmemcached_ketama.so"
else
    echo "peers/build.sh: skipping libmemcached_ketama (no libmemcached-dev)" >&2
fi
"$cc" -O2 -Wall -Wextra -Werror -I "$abi" "$here/c/abi_pipe.c" -ldl -o "$out/abi_pipe"
if command -v go >/dev/null 2>&1 && [ -d /usr/share/gocode/src/github.com/golang/groupcache ]; then
    # GOPATH mode: the Debian package's sources, no module download.
    GOCACHE="$(cd "$out" && pwd)/.gocache" GO111MODULE=off GOPATH=/usr/share/gocode \
        go build -o "$out/groupcache_peer" "$here/go/groupcache_peer.go"
else
    echo "peers/build.sh: skipping groupcache_peer (no go or groupcache sources)" >&2
fi
if command -v javac >/dev/null 2>&1 && [ -f /usr/share/java/spymemcached.jar ]; then
    javac -Xlint:all -Werror -cp /usr/share/java/spymemcached.jar -d "$out/java" \
        "$here/java/SpymemcachedPeer.java"
else
    echo "peers/build.sh: skipping SpymemcachedPeer (no javac or libspymemcached-java)" >&2
fi
if command -v javac >/dev/null 2>&1 && [ -f /usr/share/java/guava.jar ]; then
    javac -Xlint:all -Werror -cp /usr/share/java/guava.jar -d "$out/java" \
        "$here/java/GuavaJumpPeer.java"
else
    echo "peers/build.sh: skipping GuavaJumpPeer (no javac or libguava-java)" >&2
fi
