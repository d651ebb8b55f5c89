"""What the tests that start a murgat process and press Ctrl-C in it share."""

from __future__ import annotations

import signal


def ctrl_c_as_at_a_terminal() -> None:
    """``preexec_fn`` for a child that is sent SIGINT: it starts with Ctrl-C at its default, as a
    command typed at a terminal does. A suite started in the background (``make test &``, some CI
    runners) hands its children SIGINT *ignored*, and Python then never installs the handler that
    raises ``KeyboardInterrupt``: the test would measure how it was launched, not murgat."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
