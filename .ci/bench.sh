#!/usr/bin/env bash
# CI regression gate: the benchmark suite on the built wheel, then the gate. Exits non-zero
# only on a regression (or a broken build/suite, or a base that does not build). Called
# from .ci/run.
#
# Mode. When the clone knows the commit this change branched from (the merge base with
# origin/main, or RING_BENCH_BASE), the gate is A/B: that commit is built from a clean
# export and timed side by side with the change (tox -e bench-ab), which has teeth on any
# runner. On main itself the base is the previous commit. A shallow clone or one without
# origin/main has no merge base: the gate then runs against the committed baseline (tox -e
# bench), whose timings only count on the machine that recorded it. Each step says which.
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

# The base of an A/B run, or nothing: RING_BENCH_BASE, else the merge base with origin/main
# (on main, where that is HEAD itself, the commit before it).
find_base() {
    local upstream="${RING_BENCH_UPSTREAM:-origin/main}" base
    if [ -n "${RING_BENCH_BASE:-}" ]; then
        git rev-parse --verify --quiet "${RING_BENCH_BASE}^{commit}"
        return
    fi
    git rev-parse --verify --quiet "${upstream}^{commit}" >/dev/null || return 0
    base=$(git merge-base HEAD "$upstream" 2>/dev/null) || return 0
    if [ "$base" = "$(git rev-parse HEAD)" ]; then
        git rev-parse --verify --quiet "HEAD~1^{commit}" || true
    else
        echo "$base"
    fi
}

base=$(find_base)
run_gate() {  # $1: the file the gate names its regressions in
    if [ -n "$base" ]; then
        echo "bench.sh: mode A/B: this change against $base, timed side by side"
        RING_BENCH_REGRESSIONS="$1" python3 -m tox -e bench-ab -- --against "$base"
    else
        echo "bench.sh: mode baseline: no merge base in this clone (shallow, or no" \
             "${RING_BENCH_UPSTREAM:-origin/main}); gating against benchmarks/baseline"
        RING_BENCH_REGRESSIONS="$1" python3 -m tox -e bench -- --bench-mode=short
    fi
}

run_gate "$first"
status=$?
[ "$status" -eq 0 ] && exit 0
# Anything but regressions (a broken build or suite, data the gate cannot judge) fails now.
[ -s "$first" ] || exit "$status"

echo "bench.sh: regressions in the first run: $(paste -sd' ' "$first"); running the gate again to confirm them"
run_gate "$second"
status=$?
[ "$status" -eq 0 ] || [ -s "$second" ] || exit "$status"
confirmed=$(sort "$first" | comm -12 - <(sort "$second"))
if [ -n "$confirmed" ]; then
    echo "bench.sh: FAIL: regressed in both runs: $(echo "$confirmed" | paste -sd' ')"
    exit 1
fi
echo "bench.sh: PASS: nothing regressed in both runs (first: $(paste -sd' ' "$first"); second: $(paste -sd' ' "$second"))"
