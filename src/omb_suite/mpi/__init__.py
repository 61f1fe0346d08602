"""mpi: see docs/maintaining.md."""
