"""osu: see docs/maintaining.md."""
