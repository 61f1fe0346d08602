"""tuning: see docs/maintaining.md."""
