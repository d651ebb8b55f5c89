"""What a command error says: its message once, whatever wrapped it."""

from __future__ import annotations


def test_a_command_error_carries_its_message_once() -> None:
    """Before: ``SettingsError(str(exc))`` of another command error printed ``error: exit 2: exit 2: …``."""
    from murgat.engine.errors import CommandError, SettingsError

    inner = SettingsError("no such judge")
    assert str(SettingsError(str(inner))) == "no such judge" == SettingsError(f"exit 2: {inner}").message
    assert CommandError(5, "error: exit 5: cannot write").message == "cannot write"
