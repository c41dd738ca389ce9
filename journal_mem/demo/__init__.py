"""`jmem demo`: the whole story in a temporary repository, narrated."""
