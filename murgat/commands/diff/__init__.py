"""``murgat diff``: what differs between two run folders."""
