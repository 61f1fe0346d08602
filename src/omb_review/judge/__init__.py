"""Judging: each series' latest sessions against the sessions before them.

The gate (``gate``, its per-series result ``result``), change points and the rank test
(``detect``, ``mannwhitney``), a session's noise (``sessions``), the curve-level rule
(``coherence``), the other libraries as the canary (``canary``), what changed between runs
and OSU releases (``run_changes``, ``osu_releases``), findings (``findings``), what
``omb-review check`` prints and returns (``gate_output``, ``check``) and the fleet's slow
node or link (``fleet``). Imports :mod:`omb_review.read` only.
"""
