"""``murgat export``: a score run as a flat table."""
