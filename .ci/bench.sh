#!/usr/bin/env bash
# CI regression gate, short mode: the benchmark suite on the built wheel, then the gate.
# Exits non-zero only on a regression (or a broken build/suite). Called from .ci/run.
#
# A regression must reproduce. A run that fails is followed by a second whole run, and
# only what regressed in both fails CI: figures are deterministic and fail both times, and
# so does a benchmark of the baseline that the run did not measure (the gate names it as a
# regression and keeps the baseline); a timing that one busy moment on a shared machine
# pushed past the threshold does not come back. A real 2x slowdown fails both runs.
set -uo pipefail
cd "$(dirname "$0")/.."

python3 -m tox --version >/dev/null 2>&1 || python3 -m pip install --quiet 'tox>=4'
first=$(mktemp) second=$(mktemp)
trap 'rm -f "$first" "$second"' EXIT

RING_BENCH_REGRESSIONS="$first" python3 -m tox -e bench -- --bench-mode=short
status=$?
[ "$status" -eq 0 ] && exit 0
# Anything but regressions (a broken build or suite, data the gate cannot judge) fails now.
[ -s "$first" ] || exit "$status"

echo "bench.sh: regressions in the first run: $(paste -sd' ' "$first"); running the suite again to confirm them"
RING_BENCH_REGRESSIONS="$second" python3 -m tox -e bench -- --bench-mode=short
status=$?
[ "$status" -eq 0 ] || [ -s "$second" ] || exit "$status"
confirmed=$(sort "$first" | comm -12 - <(sort "$second"))
if [ -n "$confirmed" ]; then
    echo "bench.sh: FAIL: regressed in both runs: $(echo "$confirmed" | paste -sd' ')"
    exit 1
fi
echo "bench.sh: PASS: nothing regressed in both runs (first: $(paste -sd' ' "$first"); second: $(paste -sd' ' "$second"))"
