"""``murgat citations``: how murgat reads one text: its sentences and citations."""
