"""Measuring code the metrics share: timed rounds (`timing`), the memory floor of a batch
lookup (`floor`) and memory probes in fresh processes (`probes`). A metric records and
renders figures; what it measures them with lives here, so that no metric imports another
to time or probe its own forms."""
