#!/usr/bin/env bash
# CI regression gate, short mode: the benchmark suite on the built wheel, then the gate.
# Exits non-zero only on a regression (or a broken build/suite). Called from .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m tox --version >/dev/null 2>&1 || python3 -m pip install --quiet 'tox>=4'
python3 -m tox -e bench -- --bench-mode=short
