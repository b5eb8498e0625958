"""The benchmark regression gate behind `tox -e bench`.

`benchmarks/` (a pytest-benchmark suite) measures; this package decides:
- `plan`: what the suite measures in each mode (ring sizes, rounds, keys),
- `references`: the fixed computations every timing is divided by,
- `results`: reading the suite's pytest-benchmark JSON into ratios and figures,
- `baseline`: the committed baseline file, its format version and compatibility,
- `decide`: the rules that call a difference a regression,
- `gate`: judging one run against the baseline; `harness.cli.gate` (`ring-bench-gate
  RESULTS.json`) prints its table and sets the exit code.
"""
