"""`python -m journal_mem`: the same program as `jmem`."""

from journal_mem.main import main

raise SystemExit(main())
