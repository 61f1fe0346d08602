"""Which node or link is slow: every node of one allocation tested, the culprit named.

Owns ``schedule`` (the rounds of disjoint node pairs that measure every pair of an
allocation, within and across the site's switch groups, and what they cost) and ``culprit``
(a node slow with every partner, a link slow between two nodes that are fine with the others,
a switch group slow with every other group: named from the pairs' figures against the
fleet's own, with the evidence and the drain commands a site would run).

Imports nothing of the suite: the ReFrame layer (``rfm``) and ``omb-review`` read it. Never
ReFrame.
"""
