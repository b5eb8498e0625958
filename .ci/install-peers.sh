#!/usr/bin/env bash
# Installs the real peers the integration tests check our constructions against.
# Idempotent and quiet: does nothing when nginx is already on PATH. uhashring
# comes with the `test` extra; only nginx needs the system package manager.
set -euo pipefail

if ! command -v nginx >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # The tests start their own nginx; the packaged service need not run.
    apt-get install -y -qq nginx >/dev/null
fi
