"""``murgat calibrate``: judge runs against human labels, and the run's figures corrected with them."""
