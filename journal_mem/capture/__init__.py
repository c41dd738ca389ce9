"""Native memory filed the moment it is written, and a checkout's memory edits filed
properly: `hook.py` recognises the tool calls that wrote memory (PostToolUse),
`filing.py` reads one memory file into a proposal for the intake, files it and
puts the checkout's copy back (`jmem rescue` files a worktree's files the same way)."""
