"""Secrets out of everything murgat writes or prints about its settings: one function, :func:`redact`.

Why: ``-J api_key=…`` and a base URL with credentials (``http://user:pass@host/v1``) were kept in
``config.json`` as given, shown on the run's page and printed by ``diff``. Settings are serialised
for a run folder in one place (:meth:`murgat.engine.folder.RunFolder.check_config`), which applies
this; the page and ``diff`` read that file. A redacted value keeps its shape (``api_key=***``,
``http://user:***@host/v1``), so a reader still sees that a key was set and which host was used.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "***"
#: names of settings whose values are credentials: a whole part of the name (split at ``_``, ``-``, ``.``), so that
#: ``max_tokens`` or ``tokens_per_minute`` (counts) keep their values while ``token``, ``auth_token`` and ``api_key`` do not
_SECRET_NAME = re.compile(r"(?:^|[_.-])(?:(?:api|access|private|secret)[_-]?key|apikey|token|secret|passw(?:or)?d|pwd"
                          r"|authorization|credentials?|bearer)(?:$|[_.-])", re.I)
#: the user-information part of a URL: ``scheme://USER:PASSWORD@`` or ``scheme://TOKEN@``
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^/\s:@]*)(?::(?P<pw>[^/\s@]*))?@")
_OPTION = re.compile(r"^(?P<name>[A-Za-z_][\w.-]*)=(?P<value>.*)$", re.S)


def _url(text: str) -> str:
    def hide(m: re.Match[str]) -> str:
        if m.group("pw") is None:  # a lone user part is often a token
            return f"{m.group('scheme')}{REDACTED}@" if m.group("user") else m.group(0)
        return f"{m.group('scheme')}{m.group('user')}:{REDACTED}@"

    return _USERINFO.sub(hide, text)


def redact_text(text: str) -> str:
    """``text`` with URL credentials hidden, and the value hidden when it is a ``NAME=VALUE`` option
    whose name says credential (``api_key=…``)."""
    m = _OPTION.match(text)
    if m is not None and _SECRET_NAME.search(m.group("name")) and m.group("value"):
        return f"{m.group('name')}={REDACTED}"
    return _url(text)


def redact(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every credential replaced by ``***``: the
    value of a key whose name says credential, a ``NAME=VALUE`` option string of one, and the
    password (or token) of every URL."""
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and _SECRET_NAME.search(k) and v not in (None, "")
                    else redact(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
