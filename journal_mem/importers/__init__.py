"""Memory from elsewhere into the journal (one module per source), and export."""
