"""The distiller's steps below the `jmem distill` command, one module per job.

`schedule` (is a distill due), `safety` (when writing is refused), `folding`
(the fold and render of the journal, and the fold before it), `files` (the
distilled files on disk and the blob ids this machine wrote) and `commit`
(what goes into the distill commit). `commands/distill.py` runs them in order
under the distill lock; `check`, `push` and `watch` use them directly.
"""
