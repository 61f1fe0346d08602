"""New ReFrame reference values from a stable window of a series' history (``baseline``).
Imports :mod:`omb_review.read` and :mod:`omb_review.judge`.
"""
