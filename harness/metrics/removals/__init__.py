"""The removals metric ([removals]): every algorithm losing servers step by step. `metric`
measures, `options` reads the table, `walk` says which states are measured, `memory`
probes each state in a fresh process, `records` and `tables` hold and render the
figures."""
