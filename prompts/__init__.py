"""Prompt templates as plain files in ``prompts/templates`` and a tiny loader.

Placeholders are ``{{name}}``. :func:`render` fails when a placeholder has no value or a
value has no placeholder, so a renamed variable can never silently produce a prompt with
a hole in it. :func:`template_hash` goes into run configs so a changed prompt is visible.
Depends on nothing else of murgat's.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"
_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class PromptError(KeyError):
    """A template is missing, or its variables do not match the values given."""


@lru_cache(maxsize=128)
def load(name: str) -> str:
    path = TEMPLATES / f"{name}.txt"
    if not path.is_file():
        raise PromptError(f"no prompt template {name!r} in {TEMPLATES}")
    return path.read_text(encoding="utf-8")


def variables(name: str) -> set[str]:
    return set(_VAR.findall(load(name)))


def render(name: str, **values: object) -> str:
    """The template with every ``{{var}}`` replaced; exact variable match is enforced."""
    text = load(name)
    wanted = set(_VAR.findall(text))
    missing = wanted - values.keys()
    extra = values.keys() - wanted
    if missing or extra:
        raise PromptError(
            f"template {name!r}: " + "; ".join(
                p for p in (f"missing {sorted(missing)}" if missing else "", f"unexpected {sorted(extra)}" if extra else "")
                if p
            )
        )
    return _VAR.sub(lambda m: str(values[m.group(1)]), text).strip()


def template_hash(name: str) -> str:
    return hashlib.sha256(load(name).encode()).hexdigest()[:12]


def available() -> list[str]:
    return sorted(p.stem for p in TEMPLATES.glob("*.txt"))
