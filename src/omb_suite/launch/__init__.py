"""launch: see docs/maintaining.md."""
