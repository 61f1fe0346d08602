"""The report: one self-contained HTML page (``page``) built stage by stage (``build``) from
the chart data (``plots``), the comparison views (``views``), the Hockney fits
(``hockney``), the fleet's node-by-node matrix (``fleet_matrix``) and the procurement table
(``procurement``, also ``omb-procurement``). Imports :mod:`omb_review.read`,
:mod:`omb_review.judge` and :mod:`omb_review.tuning`.
"""
