#!/usr/bin/env bash
# Installs the real peers the integration tests check our constructions against,
# and the C libraries the point generator links (cext/generate.c): OpenSSL's
# libcrypto (BLAKE2b, MD5) and zlib (CRC-32), headers included.
# Idempotent and quiet: does nothing when they are already there. uhashring
# comes with the `test` extra; nginx and the headers need the system package manager.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
updated=0
if [ ! -f /usr/include/openssl/evp.h ] || [ ! -f /usr/include/zlib.h ]; then
    apt-get update -qq
    updated=1
    apt-get install -y -qq libssl-dev zlib1g-dev >/dev/null
fi
if ! command -v nginx >/dev/null 2>&1; then
    [ "$updated" = 1 ] || apt-get update -qq
    # The tests start their own nginx; the packaged service need not run.
    apt-get install -y -qq nginx >/dev/null
fi
