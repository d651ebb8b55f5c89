"""``murgat summarize``: runs side by side, paired differences, agreement between their judges."""
