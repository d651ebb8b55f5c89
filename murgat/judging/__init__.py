"""What every command that asks a judge or a model about media shares, below the commands.

- :mod:`~murgat.judging.config` — :class:`JudgingConfig`: how evidence is cut and shown and how
  requests are sent (what ``score``, ``faithfulness``, ``reflect``, ``program`` all carry);
- :mod:`~murgat.judging.pool` — :class:`CallPool`, identical requests in flight sent once;
- :mod:`~murgat.judging.context` — :class:`ItemContext`, one item's media, text channels and the
  evidence already built (with the recipe that stands for it in cache keys);
- :mod:`~murgat.judging.channels` — the text channels of a media file: speech (ASR), on-screen
  text (OCR) and sound classes;
- :mod:`~murgat.judging.sentences` — a text's citation-aware sentences checked against the media;
- :mod:`~murgat.judging.entail` — one entailment question about cited evidence (``score``'s
  stages and ``program``'s runtime check);
- :mod:`~murgat.judging.answering` — the model being evaluated writes an answer (``generate``,
  ``sweep``, ``reflect``).

Nothing here knows a command: the layer sits between the judges (providers) and the commands.
"""
