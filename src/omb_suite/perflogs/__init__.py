"""Reading perflog files: the one reader of ReFrame perflogs (``reader``: any header, one-line
or multiline records, ReFrame 4.0-4.2's comma format, ReFrame 3 lines through ``rfm3``), and
the line it could not use (``problem``: reported, never dropped). The review reads trees of
them through it; the cost fit and the iteration history read the suite's own records with
:func:`reader.read_rows`. Imports no other package of the suite. Pure: no ReFrame.
"""
