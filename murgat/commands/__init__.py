"""One package per command the ``murgat`` command line offers (``cli.py`` + its own modules). Commands never import each other: what several share lives below them (report, engine, judging, core)."""
