"""Tuning recommendations from proven algorithm sweeps (``tune``), narrowed to where their
proof held (``narrow``), written as the library's own tuning file (``tune_output``).
Imports :mod:`omb_review.read` and :mod:`omb_review.judge`.
"""
