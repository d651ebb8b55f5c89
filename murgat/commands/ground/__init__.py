"""``murgat ground``: responses + gold evidence → grounding figures (``metric`` is the pure metric, its docstring
the spec; ``run`` the API). The gold file format is :mod:`murgat.core.gold`, its importers :mod:`murgat.commands.gold`."""
