"""machine: see docs/maintaining.md."""
