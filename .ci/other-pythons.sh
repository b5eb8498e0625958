#!/usr/bin/env bash
# The fast part of the test suite on the other supported Pythons (3.12 and 3.13; .ci/run's
# venv tests 3.11): for each, a fresh virtual environment, the README's install
# (pip install -e '.[test]', which compiles the C core for that Python), then the tests
# listed in FAST below. About 1.5 to 2 minutes per Python on a 2-core machine.
#
# Each Python is found by running it, not by its name on PATH: a pyenv shim named
# python3.12 exists even when pyenv cannot run it. Tried in order: $PYTHON312 / $PYTHON313,
# pyenv's newest 3.12.x / 3.13.x, then python3.12 / python3.13 on PATH. A Python not found
# fails the script, naming what was tried.
#
# Each Python installs and tests a fresh clone of this checkout's HEAD in a temporary folder
# (removed on exit, with the venvs): an editable install compiles the C core in place, and
# cffi's abi3 module of the checkout would otherwise be rebuilt by another Python under the
# 3.11 venv that CI's later steps use.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSIONS=(3.12 3.13)

# The fast part: every test of the C core's parity with the reference and its properties,
# of the algorithms against their references and peers, and of the command lines (run,
# show, compare, plan, the history, exit codes, signals, the gate's help), about a minute
# together. Left out: the browser and live-server tests (skipped without chromium, nginx,
# haproxy anyway), the fuzzers, the foreign-peer adapters, the docs and committed-page
# re-renders, and the slow marker (pytest's default -m 'not slow' applies).
FAST=(
    # the C core: layouts, lookups and generation against the reference, and properties
    tests/unit/test_layout_parity.py tests/unit/test_ring.py tests/property/test_movement_property.py
    tests/unit/test_layouts.py tests/unit/test_hashing.py tests/unit/test_c_inputs.py tests/property/test_bucketed.py
    tests/unit/test_scalar_lookup.py tests/unit/test_generation_c.py tests/unit/test_blake2b_lanes.py
    tests/unit/test_md5_many.py tests/unit/test_range_hashes.py tests/unit/test_siphash.py
    tests/unit/test_replicas.py tests/unit/test_cache_model.py tests/unit/test_client_recipes.py
    tests/unit/test_equivalence.py tests/unit/test_constructions.py tests/unit/test_metrics.py
    # the algorithms, each against its reference (and its peer library where there is one)
    tests/unit/test_algorithms.py tests/unit/test_algorithms_jump.py tests/unit/test_algorithms_maglev.py
    tests/unit/test_algorithms_rendezvous.py tests/unit/test_algorithms_rendezvous_weighted.py
    tests/unit/test_algorithms_multi_probe.py tests/unit/test_algorithms_bounded_load.py
    tests/unit/test_algorithms_anchor.py tests/unit/test_algorithms_memento.py
    tests/unit/test_algorithms_dx.py tests/unit/test_algorithms_jumpback.py
    tests/unit/test_algorithms_binomial.py tests/unit/test_algorithms_fliphash.py
    tests/unit/test_algorithms_powerch.py tests/unit/test_libketama_uhashring.py
    # the command lines
    tests/unit/test_program_name.py tests/unit/test_runner.py tests/unit/test_compare.py tests/unit/test_plan.py
    tests/unit/test_history.py tests/unit/test_history_location.py tests/unit/test_not_a_checkout.py
    tests/unit/test_failures.py tests/unit/test_signals.py tests/unit/test_outputs.py tests/unit/test_model.py
    tests/unit/test_scenario_validation.py tests/live/test_hostile_inputs.py
    tests/unit/test_gate_base_install.py tests/unit/test_committed_results.py tests/unit/test_layers.py
)
# 10M requests in seconds: a bound for this machine's 3.11 run, not a check of the Python.
DESELECT=(--deselect tests/unit/test_cache_model.py::test_ten_million_zipf_requests_in_seconds)

# The first Python that runs and reports version $1.
find_python() {
    local version=$1 override tried=() candidate root
    override="PYTHON${version/./}"
    local candidates=()
    [ -n "${!override:-}" ] && candidates+=("${!override}")
    root=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
    while IFS= read -r candidate; do
        candidates+=("$candidate")
    done < <(ls -d "$root/versions/$version".*/bin/"python$version" 2>/dev/null | sort -rV)
    candidates+=("python$version")
    for candidate in "${candidates[@]}"; do
        tried+=("$candidate")
        if "$candidate" -c "import sys; sys.exit(sys.version_info[:2] != (${version/./, }))" \
                >/dev/null 2>&1 \
           && "$candidate" -c "import venv, ensurepip" >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    echo "other-pythons.sh: no working Python $version with venv and ensurepip (tried:" \
         "${tried[*]}); install it (pyenv install $version, or apt-get install" \
         "python$version python$version-venv), or name it in \$$override" >&2
    return 1
}

pythons=()
for version in "${VERSIONS[@]}"; do
    pythons+=("$(find_python "$version")")
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checkout=$(pwd)
for python in "${pythons[@]}"; do
    version=$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
    started=$SECONDS
    echo "== Python $version ($python)"
    git clone --quiet "$checkout" "$work/clone-$version"
    cd "$work/clone-$version"
    "$python" -m venv "$work/$version"
    "$work/$version/bin/pip" install --quiet -e '.[test]'
    installed=$SECONDS
    PYTHONHASHSEED=0 "$work/$version/bin/python" -m pytest -q -p no:cacheprovider \
        "${FAST[@]}" "${DESELECT[@]}"
    echo "== Python $version: installed in $((installed - started)) s," \
         "tested in $((SECONDS - installed)) s"
    cd "$checkout"
done
