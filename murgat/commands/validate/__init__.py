"""``murgat validate``: responses' citations checked against the media before any judge call."""
