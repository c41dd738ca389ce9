"""Memory for any agent loop: the five points, their packs and lessons."""
