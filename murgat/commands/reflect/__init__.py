"""``murgat reflect``: self-reflection (repair the first unfaithful perception step, continue)."""
