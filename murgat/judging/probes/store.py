"""The probe clip for a seed, made once and kept in the media cache (:mod:`murgat.judging.probes.clip` holds its
design, :mod:`murgat.judging.probes.media` draws it; numpy is loaded only when a clip is made)."""

from __future__ import annotations

from pathlib import Path

from murgat.judging.probes.clip import CLIP_VERSION, ProbeClip, design_digest, espeak_version
from murgat.media import safewrite
from murgat.media.cache import default_cache, file_digest, make_key


def probe_clip(seed: int = 0) -> ProbeClip:
    """The clip for ``seed``, made once and kept in the media cache (content-addressed: a clip of
    other bytes, from another espeak-ng, is another entry)."""
    cache = default_cache()
    key = make_key("probe-clip", CLIP_VERSION, seed=seed, espeak=espeak_version(), design=design_digest())
    made: dict[str, object] = {}

    def produce(tmp: Path) -> None:
        from murgat.judging.probes.media import clip_bytes  # numpy: loaded only when a clip is made

        data, meta = clip_bytes(seed)
        made.update(meta)
        safewrite.write_bytes(tmp, data)

    path = cache.get_or_create("probe-clip", key, ".avi", produce)
    meta = cache.get_json("probe-clip", key)
    if meta is None:
        if not made:
            from murgat.judging.probes.media import describe

            made.update(describe(seed))
        cache.put_json("probe-clip", key, made)
        meta = made
    return ProbeClip(path=str(path), sha256=file_digest(path), **meta)
