#!/usr/bin/env bash
# The fleet's tasks on a real Dask cluster, started with Dask's own command-line tools on
# loopback: one `dask scheduler` and two `dask worker`s (no nanny, so a killed worker stays
# dead). A reduced fleet (tests/fixtures/fleet-reduced.toml) runs locally, then through the
# cluster: the fleet's figures must be the same bits. Then it runs through the cluster
# again while one worker is killed mid-run: Dask reruns the lost tasks on the other, and the
# figures must still be the same bits. A sweep's points (tests/fixtures/sweep-reduced.toml)
# go through the cluster as tasks too, the same bits as run in sequence. Everything it
# started is stopped on exit (trap).
# Installs dask[distributed] into the venv if missing. At most two minutes.
#   bash .ci/dask-fleet.sh            (from the checkout, with .venv set up)
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
python=${PYTHON:-.venv/bin/python}
bin=$(dirname "$python")
tmp="$(mktemp -d -t ring-harness-dask-fleet.XXXXXX)"
pids=()
cleanup() {
    # Workers first, then the scheduler (a worker whose scheduler is gone keeps trying to
    # reach it); whatever has not exited 10 s after SIGTERM gets SIGKILL.
    local i
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null || true; done
    for _ in $(seq 100); do
        local alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

say() { echo "dask-fleet: $*"; }
fail() { echo "dask-fleet: FAILED: $*" >&2; exit 1; }

if ! "$python" -c "import distributed" 2>/dev/null; then
    say "installing dask[distributed] (the [cluster] extra)"
    "$python" -m pip install --quiet 'dask[distributed]>=2024.1'
fi

port=$("$python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
scheduler="tcp://127.0.0.1:$port"
"$bin/dask" scheduler --host 127.0.0.1 --port "$port" --dashboard-address 127.0.0.1:0 \
    >"$tmp/scheduler.log" 2>&1 &
pids+=($!)
start_worker() {
    "$bin/dask" worker "$scheduler" --nthreads 1 --no-nanny --no-dashboard \
        --host 127.0.0.1 >"$tmp/worker-$1.log" 2>&1 &
    pids+=($!)
    worker_pid=$!
}
start_worker 1; first_worker=$worker_pid
start_worker 2
"$python" - "$scheduler" <<'PY' || fail "the cluster did not come up"
import sys
from distributed import Client
with Client(sys.argv[1], timeout=30) as client:
    client.wait_for_workers(2, timeout=30)
PY
say "scheduler $scheduler with two workers"

scenario=tests/fixtures/fleet-reduced.toml
figures() {  # the fleet's figures of a result, canonical JSON
    "$python" -c "import json, sys; r = json.load(open(sys.argv[1])); print(json.dumps(r['runs'][0]['figures']['fleet'], sort_keys=True))" "$1"
}
run() {  # NAME ARGS...: a run with a task folder of its own (every task computed)
    local name=$1; shift
    "$python" -m harness run "$scenario" --no-history --out "$tmp/$name" \
        --task-dir "$tmp/tasks-$name" "$@" >"$tmp/$name.log" 2>&1 \
        || { cat "$tmp/$name.log"; fail "the $name run"; }
}

run local --executor local
run dask --executor dask --scheduler "$scheduler"
[ "$(figures "$tmp/local/fleet-reduced.json")" = "$(figures "$tmp/dask/fleet-reduced.json")" ] \
    || fail "the fleet's figures through Dask differ from the local run's"
say "through Dask: the same bits as the local run"

# Sweep points are tasks too: a sweep of deterministic tables, in sequence (one process,
# no executor), then each point a task through the cluster; the same bits but for what
# differs by nature (clocks, resident sets, where it ran).
sweep=tests/fixtures/sweep-reduced.toml
"$python" - "$sweep" "$tmp/sweep-sequence.json" <<'PY' || fail "the sweep in sequence"
import json, sys
from harness.run.runner import run_scenario
from harness.run.scenario import load_scenario
result = run_scenario(load_scenario(sys.argv[1]), show_progress=False)
open(sys.argv[2], "w").write(json.dumps(result.to_json()))
PY
"$python" -m harness run "$sweep" --no-history --out "$tmp/sweep-dask" \
    --task-dir "$tmp/tasks-sweep" --executor dask --scheduler "$scheduler" \
    >"$tmp/sweep-dask.log" 2>&1 || { cat "$tmp/sweep-dask.log"; fail "the sweep through Dask"; }
grep -q '"executor": "sweep points as tasks on Dask scheduler' "$tmp/sweep-dask/sweep-reduced.json" \
    || fail "the sweep's points did not run as tasks on the cluster"
deterministic() {
    "$python" -c "import json, sys; from tests.unit.test_sweep_tasks import without_clocks; print(json.dumps(without_clocks(json.load(open(sys.argv[1]))), sort_keys=True))" "$1"
}
[ "$(deterministic "$tmp/sweep-sequence.json")" = "$(deterministic "$tmp/sweep-dask/sweep-reduced.json")" ] \
    || fail "the sweep's points through Dask differ from the run in sequence"
say "a sweep's points as tasks through Dask: the same bits as in sequence"

# Again, and kill the first worker once the first task is kept (tasks are running).
run killed --executor dask --scheduler "$scheduler" &
run_pid=$!
for _ in $(seq 600); do
    if compgen -G "$tmp/tasks-killed/*/*.json" >/dev/null; then break; fi
    sleep 0.1
done
compgen -G "$tmp/tasks-killed/*/*.json" >/dev/null || fail "no task finished in 60 s"
kept=$(ls "$tmp"/tasks-killed/*/*.json | wc -l)
total=$("$python" -c "
from harness.run.scenario import load_scenario
from harness.metrics.fleet.metric import plan
s = load_scenario('$scenario'); r = s.recipes()[0]
print(len(plan(s.measure.options['fleet'], s.measure.options['rollout'], r.algorithm, r.params).tasks))")
[ "$kept" -lt "$total" ] || fail "every task had finished before the kill ($kept of $total)"
kill -9 "$first_worker"
wait "$first_worker" 2>/dev/null || true
say "killed a worker with $kept of $total tasks done"
wait "$run_pid" || fail "the run with a killed worker"
[ "$(figures "$tmp/local/fleet-reduced.json")" = "$(figures "$tmp/killed/fleet-reduced.json")" ] \
    || fail "the fleet's figures after a worker was killed differ from the local run's"
say "a worker killed mid-run: the run completed with the same bits"

elapsed=$((SECONDS - started))
[ "$elapsed" -le 120 ] || fail "took ${elapsed} s, more than two minutes"
say "passed in ${elapsed} s"
