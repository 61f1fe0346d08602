"""omb-review: perflog trend review for the OMB regression suite.

Packages, named after what a reviewer does, and the packages each may import (besides the
pure packages of ``omb_suite`` and itself; ``tests/test_layers.py`` holds the arrows):

- :mod:`omb_review.read`: perflogs, run reports, the results database, raw OSU outputs and
  the site configuration into one typed frame, and which series each record belongs to;
- :mod:`omb_review.judge` (read): each series' latest sessions against its own history, the
  findings a person reads, the check's exit status, the fleet's slow node or link;
- :mod:`omb_review.references` (read, judge): new reference values from a stable window;
- :mod:`omb_review.tuning` (read, judge): tuning recommendations from proven sweeps;
- :mod:`omb_review.report` (read, judge, tuning): the HTML report and the procurement table.

The command line (``cli``, ``arguments``) sits above them all. Nothing here imports ReFrame
but ``read/siteconfig.py``, which reads a site's configuration with ReFrame's own loader.
"""
