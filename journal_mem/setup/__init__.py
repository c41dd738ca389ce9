"""Setting a repository up: init, git hook shims, Claude Code's files, the CI workflow, the
plugin, and status.
"""
