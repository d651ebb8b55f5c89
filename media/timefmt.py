"""Human time labels (``M:SS`` / ``H:MM:SS`` with up to millisecond decimals).

Kept here, below murgat, so both the evidence labels and the citation formatter use the
same spelling.
"""

from __future__ import annotations


def fmt_time(seconds: float) -> str:
    """``M:SS`` below an hour, ``H:MM:SS`` above; integer milliseconds avoid float drift."""
    ms = round(seconds * 1000)
    hours, rem = divmod(ms, 3_600_000)
    minutes, rem = divmod(rem, 60_000)
    secs, millis = divmod(rem, 1000)
    frac = f".{millis:03d}".rstrip("0") if millis else ""
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}{frac}"
    return f"{minutes}:{secs:02d}{frac}"


def fmt_range(start: float | None, end: float | None) -> str:
    if start is None:
        return "?"
    if end is None or end == start:
        return fmt_time(start)
    return f"{fmt_time(start)}-{fmt_time(end)}"
