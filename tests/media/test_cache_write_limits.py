"""A media cache that cannot take an entry (a file-size limit, ``EFBIG``, handled as a full disk)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from murgat.media.cache import MediaCache
from murgat.media.errors import MediaUnwritable


def _over_the_limit(p: Path) -> None:
    raise OSError(errno.EFBIG, "File too large")


def test_data_in_hand_is_kept_best_effort_with_no_fallback_file(tmp_path: Path, capsys) -> None:
    """Before: the entry was retried in a temporary folder, which meets the same limit: a traceback."""
    cache = MediaCache(tmp_path / "c")
    assert cache.keep("audio", "ab" * 32, ".npy", _over_the_limit) is None
    assert cache.put_json("asr", "cd" * 32, {"words": []}) is not None  # a small entry still fits
    assert "ulimit -f" in capsys.readouterr().err and cache._fallback is None


def test_an_entry_that_must_be_a_file_is_the_items_error_in_one_line(tmp_path: Path) -> None:
    cache = MediaCache(tmp_path / "c")
    with pytest.raises(MediaUnwritable, match="file-size limit"):
        cache.get_or_create("vclip", "ef" * 32, ".mp4", _over_the_limit)

