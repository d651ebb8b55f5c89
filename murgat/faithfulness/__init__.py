"""Step faithfulness of reasoning chains and self-reflection.

``steps`` segments a chain; ``label`` asks a judge, per step or per chain, whether each
step is perception or reasoning and whether each perception step is faithful to the media;
``metric`` computes the Unfaithful Perception Rate (UPR) with bootstrap CIs, per modality and
the answer-correctness × chain-faithfulness 2×2; ``runner``/``cli`` are
``murgat faithfulness``; ``reflect`` is Algorithm 2 (``murgat reflect``).
"""
