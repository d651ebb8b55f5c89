"""One package per command the ``murgat`` command line offers (``cli.py`` + its own modules).

Commands never import each other: what several share lives below them (settings, report, engine, judging,
core), and a command that runs another (``sweep``, ``program --score``) does it through the engine, by name."""
