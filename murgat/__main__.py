"""``python -m murgat`` is the same as the ``murgat`` command."""

from murgat.cli import run

run()
