"""``murgat score``: the MURGAT-S metric as a run command — its settings, configuration, stages,
item task, tables and command line (the shared judging pieces are :mod:`murgat.judging`)."""
