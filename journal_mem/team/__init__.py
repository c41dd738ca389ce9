"""Across the team: a fact's history, blame, stats and the HTML report."""
