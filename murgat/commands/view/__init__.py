"""``murgat view``: (re)write a run's viewer page, or compare runs item by item."""
