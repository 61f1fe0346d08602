"""Reading: every input the review accepts into one typed frame of records.

ReFrame 4 perflogs of any header and ReFrame 3 lines (``perflog``, ``rfm3``), JSON run
reports and the results database (``sources``), raw OSU outputs (``importer``), the curve
logs (``curves``), all found and cached by ``ingest`` and typed by ``normalise``; which
records form a series and which way is worse (``series``), which environment continues which
series (``lineage``), records that lack series columns (``missing_columns``), and every line
that could not be used (``skipped_line``). Imports no other package of omb_review.
``siteconfig`` is the only module here (and in the review) that imports ReFrame: a site's
configuration is read by ReFrame's own loader, lazily.
"""
