"""`ring-harness gate`: a regression gate for any ring implementation
(docs/guide/gate-your-ring.md)."""
