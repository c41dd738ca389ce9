"""Ranked live facts for a question, from an SQLite FTS5 index."""
