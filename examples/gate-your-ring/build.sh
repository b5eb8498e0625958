#!/bin/sh
# Build the example's C ring into build/libring.so, against the ABI header that the
# installed ring-harness ships (`ring-harness abi --path`). Extra arguments go to the
# compiler: `./build.sh -DRING_SLOWDOWN` builds the ring with a defect compiled in.
set -eu
cd "$(dirname "$0")"
HARNESS=${RING_HARNESS:-ring-harness}
header=$($HARNESS abi --path)
mkdir -p build
${CC:-cc} -O2 -shared -fPIC -I "$(dirname "$header")" "$@" ring.c -o build/libring.so
