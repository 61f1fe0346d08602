"""cost: see docs/maintaining.md."""
