#!/usr/bin/env bash
# The README's test command on a bare machine, as a new user's first contact: a fresh clone of
# this checkout's HEAD (so no build/, no peers/js/node_modules), with none of the optional
# tools visible. The tools are those of harness/core/tools.py (what .ci/install-peers.sh
# installs, and `ring-harness doctor` lists): inside a private mount namespace each of their
# programs is covered by /dev/null, which is not executable, and the folder holding each of
# their files (headers, jars, sources) by an empty folder. Nothing outside the namespace
# changes.
#
# Passes when the test command passes there, every test it skipped names the missing tool in
# its reason (tests/toolchains.py: "needs TOOL: ..."), and a second run from another folder
# (the shipped scenarios read, the CLI) passes too. Needs root, as CI runs, for the namespace.
#   bash .ci/bare-machine.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ "${1:-}" != "--inside" ]; then
    if ! unshare --mount --propagation private true 2>/dev/null; then
        echo ".ci/bare-machine.sh: needs a private mount namespace (unshare --mount, as root)" >&2
        exit 1
    fi
    exec unshare --mount --propagation private bash "$0" --inside
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/ring-harness-bare.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The tool table, read from the file itself (the package is not installed here yet).
tools_list() {
    python3 - "$root/harness/core/tools.py" "$1" <<'EOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("tools_table", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules["tools_table"] = module
spec.loader.exec_module(module)
for tool in module.TOOLS.values():
    for item in (tool.programs if sys.argv[2] == "programs" else tool.files):
        print(item)
EOF
}

hidden=()
empty="$work/empty"
mkdir -p "$empty"
while read -r program; do
    # A program may be found in several PATH folders: cover each until none is left.
    for _ in 1 2 3 4 5; do
        found="$(command -v "$program" 2>/dev/null || true)"
        [ -n "$found" ] && [ -x "$found" ] || break
        mount --bind /dev/null "$found"
        hidden+=("$program")
        hash -r
    done
done < <(tools_list programs)
while read -r file; do
    folder="$(dirname "$file")"
    if [ -e "$file" ] && [ -d "$folder" ]; then
        mount --bind "$empty" "$folder"
        hidden+=("$folder/")
    fi
done < <(tools_list files)
echo "bare machine: hidden ${#hidden[@]} tools and folders: ${hidden[*]:-none}"

git clone --quiet "$root" "$work/clone"
cd "$work/clone"
unset RING_HARNESS_REQUIRE_TOOLS
log="$work/tests.log"
start=$SECONDS
# The README's test command, exactly as written there.
set +e
( python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest ) \
    > "$log" 2>&1
status=$?
set -e
grep -v "^WARNING: Location" "$log" | tail -n 60
if [ "$status" -ne 0 ]; then
    echo "bare machine: the README's test command failed (exit $status)" >&2
    exit 1
fi
# pytest's -ra summary: "SKIPPED [N] FILE:LINE: REASON". Every reason names its tool.
unnamed="$(grep '^SKIPPED ' "$log" | grep -v -E '^SKIPPED \[[0-9]+\] [^ ]+: needs [^ :]+: ' || true)"
if [ -n "$unnamed" ]; then
    echo "bare machine: skips whose reason names no tool:" >&2
    echo "$unnamed" >&2
    exit 1
fi
echo "bare machine: skipped tests by the tool they need:"
grep '^SKIPPED ' "$log" | sed -E 's/^SKIPPED \[([0-9]+)\] [^ ]+: needs ([^ :]+): .*/\2 \1/' \
    | awk '{n[$1] += $2} END {for (t in n) printf "  %-14s %d\n", t, n[t]}' | sort
echo "bare machine: README test command passed in $((SECONDS - start)) s"

# pytest from another folder than the checkout's root: the shipped scenarios are read and the
# command line runs (the rest of the suite takes its paths from its own files the same way).
cd "$work"
"$work/clone/.venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$work/clone/tests/unit/test_scenario_reference.py" "$work/clone/tests/property/test_fuzz.py" \
    "$work/clone/tests/unit/test_runner.py" "$work/clone/tests/unit/test_committed_results.py" \
    > "$work/elsewhere.log" 2>&1 || { tail -n 40 "$work/elsewhere.log"; echo \
    "bare machine: pytest from another folder failed" >&2; exit 1; }
tail -n 1 "$work/elsewhere.log"
