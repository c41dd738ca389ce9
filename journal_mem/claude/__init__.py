"""Claude Code's formats: the hook protocol (`protocol`) and project files (`settings`)."""
