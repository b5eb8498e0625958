"""`python -m harness.benchgate RESULTS.json`, the same as `ring-bench-gate`."""

import sys

from harness.benchgate.cli import main

sys.exit(main())
