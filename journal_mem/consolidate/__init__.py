"""`jmem consolidate`: the deterministic plan of what memory could merge and shrink
(duplicates, conflicts, stale facts, topics over budget), and a curator's proposals,
judged like `jmem write` and filed as lessons of agent `curator`.
"""
