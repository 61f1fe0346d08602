"""Shared library of the OMB regression suite: OSU lookup, parsing, placement, checks."""
