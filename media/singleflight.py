"""One computation per key at a time, across threads.

Many items about one file start together (each in a worker thread): without this, each
of them probed, decoded and transcribed the same file at once (12 ffprobe runs and 14 audio
decodes for 4 files). Callers take the key's lock around "look in the cache, else compute
and store", so the first computes and the rest find the result.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

_LOCKS: dict[Hashable, threading.Lock] = {}
_GUARD = threading.Lock()


def lock_for(key: Hashable) -> threading.Lock:
    with _GUARD:
        lk = _LOCKS.get(key)
        if lk is None:
            if len(_LOCKS) > 4096:  # forget idle locks now and then
                for k in [k for k, v in _LOCKS.items() if not v.locked()][:2048]:
                    del _LOCKS[k]
            lk = _LOCKS[key] = threading.Lock()
        return lk
