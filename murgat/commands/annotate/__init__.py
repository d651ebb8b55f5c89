"""``murgat annotate``: a blind page for labelling a run by hand."""
