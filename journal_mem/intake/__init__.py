"""The one intake for memory: every way in reads its changes into a `Proposal`, and
`pipeline.file` judges and files them (`pipeline.py` says which protections, in
which order)."""
