"""``murgat judge check``: the probes asked of one judge."""
