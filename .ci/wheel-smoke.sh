#!/usr/bin/env bash
# The tool as a user installs it: builds the sdist and, from it, the wheel (python -m build),
# installs the wheel into a fresh venv, and from an empty folder runs every command with the
# built-in scenarios, checking each exits 0 and writes complete files (present, not empty,
# JSON that parses, no path of the installation in a result). Everything goes to one
# temporary folder, removed on exit; the checkout is left as it was (setuptools' egg-info
# aside, which git ignores).
#   bash .ci/wheel-smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
tmp="$(mktemp -d -t ring-harness-wheel-smoke.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

say() { echo "wheel-smoke: $*"; }
fail() { echo "wheel-smoke: FAILED: $*" >&2; exit 1; }

# python -m build, installed into a venv of its own if this python lacks it.
build=(python3 -m build)
if ! python3 -m build --version >/dev/null 2>&1; then
    python3 -m venv "$tmp/build-venv"
    "$tmp/build-venv/bin/pip" install --quiet build
    build=("$tmp/build-venv/bin/python" -m build)
fi
say "building the sdist, then the wheel from it"
"${build[@]}" --outdir "$tmp/dist" . >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "python -m build"; }
if grep -qi "license.*deprecat" "$tmp/build.log"; then
    fail "the build warns about the license metadata: $(grep -i 'license.*deprecat' "$tmp/build.log" | head -1)"
fi
sdist=("$tmp"/dist/ring_harness-*.tar.gz)
wheel=("$tmp"/dist/ring_harness-*.whl)
[ -f "${sdist[0]}" ] && [ -f "${wheel[0]}" ] || fail "no sdist or no wheel in $tmp/dist"
say "built $(basename "${sdist[0]}") and $(basename "${wheel[0]}") ($((SECONDS - started)) s)"

python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet "${wheel[0]}"
bin="$tmp/venv/bin"
say "installed the wheel ($((SECONDS - started)) s)"

work="$tmp/empty"
mkdir "$work"
cd "$work"
export RING_HARNESS_HISTORY="$tmp/history"

# Each file present and not empty; each .json one that parses and names no path of the venv.
complete() {
    local path
    for path in "$@"; do
        [ -s "$path" ] || fail "$path is missing or empty"
        if [[ "$path" == *.json ]]; then
            "$bin/python" -c 'import json, sys; json.load(open(sys.argv[1]))' "$path" \
                || fail "$path is not JSON"
            if grep -q "$tmp" "$path"; then fail "$path holds a path of the installation"; fi
        fi
    done
}

say "ring-harness run (the built-in default)"
"$bin/ring-harness" run --out out >run-default.txt
complete out/default.json out/default.md out/default.html run-default.txt
grep -q '"scenario_file": "scenarios/default.toml"' out/default.json \
    || fail "out/default.json does not record scenarios/default.toml"

say "ring-harness run (a scenario written here)"
cat >small.toml <<'EOF'
name = "small"
description = "the smoke test's own scenario"
[servers]
count = 10
[generator]
points_per_weight = [4, 40]
[keys]
count = 5000
[measure]
repeats = 2
scalar_keys = 500
[[operations]]
kind = "remove"
server = "server-9"
EOF
"$bin/ring-harness" run small.toml --out out >run-small.txt
complete out/small.json out/small.md out/small.html run-small.txt
[ -n "$(ls "$RING_HARNESS_HISTORY")" ] || fail "no run history in $RING_HARNESS_HISTORY"

say "ring-harness show, compare"
"$bin/ring-harness" show out/small.json >show.txt
"$bin/ring-harness" compare out/small.json latest --out compare.md >compare.txt
complete show.txt compare.txt compare.md compare.html

say "ring-harness plan, explore (the simulator's ring and a built-in scenario's)"
"$bin/ring-harness" plan --servers 40 --target-cv 0.05 --out plan >plan.txt
"$bin/ring-harness" explore --out x.html >/dev/null
"$bin/ring-harness" explore tutorial --out tutorial.html >/dev/null
complete plan.txt plan.md plan.html x.html tutorial.html

say "ring-harness reproduce --only (part of the reproduction), then --no-run"
only=a_balance_sweep,e_collisions_32,e_collisions_64,h_three_nodes
"$bin/ring-harness" reproduce --only "$only" --out rep --no-progress >reproduce.txt
complete rep/REPRODUCTION.md rep/REPRODUCTION.html rep/reproduce/collisions_vs_n.png \
    rep/reproduce/{a_balance_sweep,e_collisions_32,e_collisions_64,h_three_nodes}.json
rm rep/REPRODUCTION.md rep/REPRODUCTION.html
"$bin/ring-harness" reproduce --no-run --only "$only" --out rep >reproduce-no-run.txt
complete rep/REPRODUCTION.md rep/REPRODUCTION.html reproduce-no-run.txt
status=0
"$bin/ring-harness" reproduce --no-run --out missing 2>missing.txt || status=$?
[ "$status" = 2 ] && grep -q '`ring-harness reproduce --out missing` runs them' missing.txt \
    || fail "reproduce --no-run without results: exit $status, $(cat missing.txt)"

say "ring-harness abi, scenarios"
"$bin/ring-harness" abi >abi.txt
[ -s "$("$bin/ring-harness" abi --path)" ] || fail "abi --path names no file"
"$bin/ring-harness" scenarios >scenarios.txt
complete abi.txt scenarios.txt
grep -q '^tutorial ' scenarios.txt && grep -q '^reproduce/a_balance_sweep ' scenarios.txt \
    || fail "ring-harness scenarios does not list tutorial and reproduce/a_balance_sweep"

say "ring-bench-gate --help, and its one line where the base install lacks a mode's needs"
"$bin/ring-bench-gate" --help >gate.txt
grep -q '^usage: ring-bench-gate' gate.txt || fail "ring-bench-gate --help names no usage"
complete gate.txt
echo '{}' >bench.json
status=0
"$bin/ring-bench-gate" bench.json 2>gate-err.txt || status=$?
[ "$status" = 2 ] && [ "$(wc -l <gate-err.txt)" = 1 ] && grep -q "ring-harness\[test\]" gate-err.txt \
    || fail "ring-bench-gate on a results file without scipy: exit $status, $(cat gate-err.txt)"

say "ring-harness gate (baseline mode, a result against itself; then a bad threshold)"
"$bin/ring-harness" gate default --baseline out/default.json --result out/default.json \
    --json gate-report.json --junit gate-report.xml --markdown gate-report.md \
    --html gate-report.html >gate-stdout.txt
complete gate-report.json gate-report.xml gate-report.md gate-report.html gate-stdout.txt
grep -q 'PASS: none of' gate-stdout.txt || fail "ring-harness gate: $(cat gate-stdout.txt)"
"$bin/python" -c 'import json, sys; from harness.apps.gate.report import SCHEMA
assert json.load(open(SCHEMA))["title"] == "ring-harness gate report"
assert json.load(open(sys.argv[1]))["verdict"] == "pass"' gate-report.json \
    || fail "the wheel lacks the gate report's schema, or the report is no pass"
status=0
"$bin/ring-harness" gate default --baseline out/default.json --threshold cv=0 \
    2>gate-err.txt || status=$?
[ "$status" = 2 ] && [ "$(wc -l <gate-err.txt)" = 1 ] \
    || fail "ring-harness gate --threshold cv=0: exit $status, $(cat gate-err.txt)"
say "ring-harness identify (a libketama client's routing, from its server list)"
printf '[[servers]]\nname = "a:1"\n[[servers]]\nname = "b:2"\nweight = 2\n' >idservers.toml
"$bin/python" - <<'PY' >idrouting.csv
from harness.core.servers import Server
from harness.recipes.algorithms import get_algorithm
servers = [Server("a:1"), Server("b:2", 2)]
keys = [f"key-{i}" for i in range(500)]
owners = get_algorithm("ring").build(servers, construction="libketama").route(
    [k.encode() for k in keys])
print("key,server")
for key, owner in zip(keys, owners):
    print(f"{key},{servers[owner].name}")
PY
"$bin/ring-harness" identify idrouting.csv idservers.toml --out identify.txt >identify-out.txt \
    2>identify-err.txt
complete identify.txt identify-out.txt
grep -q '^1.000000  libketama (shipped)' identify.txt \
    || fail "ring-harness identify did not name libketama: $(head -3 identify.txt)"

say "ring-harness doctor"
"$bin/ring-harness" doctor >doctor.txt
complete doctor.txt
grep -q '^Optional tools: ' doctor.txt && grep -q 'history ' doctor.txt \
    || fail "ring-harness doctor: $(cat doctor.txt)"

[ -z "$(ls -A "$work" | grep -v -x -e out -e rep -e missing -e '.*\.\(txt\|md\|html\|toml\|json\|xml\|csv\)')" ] \
    || fail "unexpected files in the working folder: $(ls -A "$work")"
say "passed in $((SECONDS - started)) s"
