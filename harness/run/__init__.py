"""Running a scenario: the spec, its parsing and checks, the estimate made before any
work, the runner that walks the metric registry, and progress."""
