"""The git hooks' policy: a standard-library fast path, the rules, and rescue."""
