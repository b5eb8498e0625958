"""The benchmark regression gate behind `tox -e bench`.

`benchmarks/` (a pytest-benchmark suite) measures; this package decides:
- `plan`: what the suite measures in each mode (ring sizes, rounds, keys),
- `references`: the fixed computations every timing is divided by,
- `results`: reading the suite's pytest-benchmark JSON into ratios and figures,
- `baseline`: the committed baseline file, its format version and compatibility,
- `decide`: the rules that call a difference a regression,
- `gate`: judging one run against the baseline; `harness.cli.gate` (`ring-bench-gate
  RESULTS.json`) prints its table and sets the exit code;
- the A/B gate (`ring-bench-gate --against REV`): `ab_base` exports and builds the base
  commit, `ab_worker` (a script) holds one side's suite and times it on request,
  `ab_session` asks the two sides for samples in turn, `ab_decide` judges the paired
  ratios, `ab_report` renders them, `ab_gate` runs it all.
"""
