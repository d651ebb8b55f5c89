"""murgat inside other evaluation harnesses (optional extras; nothing in murgat's core imports them).

- :mod:`murgat.integrations.inspect_ai` — an inspect_ai task (``murgat_cited_qa``), a media solver
  and a scorer (``murgat_scorer``) whose metrics are MURGAT-S and its parts with their CIs
  (extra ``murgat[inspect]``);
- :mod:`murgat.commands.imports.inspect_log` — ``murgat import inspect LOG.eval --out DIR``: an
  inspect log's samples as a murgat input, to score, view, summarize and calibrate;
- :mod:`murgat.integrations.lmms_eval` — an lmms-eval task (``murgat_cited_video``, found with
  ``--include_path``) whose metrics are MURGAT-S with its CI, accuracy and attributed accuracy, and
  ``murgat import lmms-eval`` of its samples logs (extra ``murgat[lmms]``);
- :mod:`murgat.commands.imports.samples` — the one mapping between an inspect sample and a murgat item,
  shared by the scorer and the importer (imports nothing of inspect_ai).

This package sits at the API layer: it uses murgat the way a user's script does (``murgat.score``).
"""
