"""The journal: entries (parse, validate, fold, render) and the store on disk (exclusive
writes, the outbox, the one reader and its cache).
"""
