"""`[fleet]` and `[rollout]`: a fleet of data centres, each a set of router processes, and
a change of recipe rolled out over it in waves, with a rollback (issue #43)."""
