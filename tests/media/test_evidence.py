"""Citations → evidence: one modality per segment, time order, explicit "no evidence"."""

from __future__ import annotations

from pathlib import Path

import pytest

from murgat.core.citations import check_durations, parse_citations
from murgat.media.errors import NoAudioStream, OutsideMedia
from murgat.media.evidence import EvidenceConfig, build_evidence
from murgat.media.streams import probe


def cites(text: str, path: Path):
    return check_durations(parse_citations(text), probe(path).durations())


def test_segments_in_time_order_with_labels(friday: Path) -> None:
    c = cites("(visual, 0:04; audio, 0:01-0:02; visual, 0:00-0:02)", friday)
    ev = build_evidence(friday, c)
    assert [s.label for s in ev.segments] == ["visual 0:00-0:02", "audio 0:01-0:02", "visual 0:04"]
    vis_range, audio, vis_point = ev.segments
    assert audio.frames == [] and audio.audio is not None and len(audio.audio) == 16000
    assert vis_range.audio is None and [f.time for f in vis_range.frames] == [0.0, 1.0, 2.0]
    assert len(vis_point.frames) == 1 and vis_point.frames[0].time == pytest.approx(4.0)


def test_point_audio_is_padded(friday: Path) -> None:
    ev = build_evidence(friday, cites("(audio, 0:03)", friday), EvidenceConfig(audio_point_pad_s=0.5))
    (s,) = ev.segments
    assert (s.start, s.end) == (2.5, 3.5) and len(s.audio) == 16000


def test_pad_widens_and_clamps(friday: Path) -> None:
    ev = build_evidence(friday, cites("(audio, 0:00-0:02; visual, 0:05-0:06)", friday), EvidenceConfig(pad_s=0.5))
    a, v = ev.segments
    assert (a.start, a.end) == (0.0, 2.5)
    assert v.start == 4.5 and v.end == pytest.approx(6.17, abs=0.02)


def test_frame_cap(friday: Path) -> None:
    ev = build_evidence(friday, cites("(visual, 0:00-0:06)", friday), EvidenceConfig(fps=10, max_frames=4, max_side=320))
    (s,) = ev.segments
    assert len(s.frames) == 4 and max(s.frames[0].image.shape) == 320


def test_invalid_citation_gives_explicit_no_evidence(friday: Path) -> None:
    ev = build_evidence(friday, cites("(visual, 0:30; audio, 0:05-0:03; audio, 0:01)", friday))
    past, reversed_, ok = sorted(ev.segments, key=lambda s: s.citation_index)
    assert not past.available and "past the end" in (past.reason or "")
    assert not reversed_.available and "before start" in (reversed_.reason or "")
    assert ok.available and past.frames == [] and reversed_.audio is None
    assert [s.citation_index for s in ev.available] == [2]


def test_audio_citation_on_file_without_audio(bikes: Path) -> None:
    raw = parse_citations("(audio, 0:01-0:02)")
    with pytest.raises(NoAudioStream, match=r"bikes\.mp4"):
        build_evidence(bikes, raw, strict=True)
    (s,) = build_evidence(bikes, raw).segments
    assert not s.available and "without an audio stream" in (s.reason or "")


def test_citation_past_end_strict(friday: Path) -> None:
    with pytest.raises(OutsideMedia, match="after the stream ends"):
        build_evidence(friday, parse_citations("(visual, 0:30)"), strict=True)


def test_subset_indices(friday: Path) -> None:
    c = cites("(visual, 0:01; audio, 0:02-0:03; visual, 0:04)", friday)
    ev = build_evidence(friday, c, indices=[2, 0])
    assert [s.citation_index for s in ev.segments] == [0, 2]


def test_clip_mode_writes_picture_only_file(friday: Path) -> None:
    ev = build_evidence(friday, cites("(visual, 0:01-0:03)", friday), EvidenceConfig(visual_as="clip"))
    (s,) = ev.segments
    info = probe(s.clip_path)
    assert info.has_video and not info.has_audio
    assert info.video_duration == pytest.approx(2.0, abs=0.1)


# Box citations: the whole frame with the box drawn, and the box enlarged (docs/guide/citations.md, "Box citations")


def _boxed(text: str, path: Path):
    from murgat.core.boxes import BoxConvention

    info = probe(path)
    return check_durations(parse_citations(text, BoxConvention().with_native(info.width, info.height)), info.durations())


def test_boxed_point_gives_drawn_frame_and_enlarged_crop(friday: Path) -> None:
    import numpy as np

    from murgat.media.evidence import CROP_SIDE
    from murgat.media.frames import open_video

    # friday.mp4 is 640x480; a 64x48 box at (0.25, 0.25)
    ev = build_evidence(friday, _boxed("(visual, 0:02, box 0.25,0.25,0.35,0.35)", friday))
    (s,) = ev.segments
    assert s.label == "visual 0:02 box 0.250,0.250,0.350,0.350"
    assert s.boxes == ((0.25, 0.25, 0.35, 0.35),)
    (frame,) = s.frames
    (crop,) = s.crops
    native = open_video(friday).frames_at([2.0])[0].image
    assert frame.image.shape == native.shape
    # the outline is red where the box's left edge runs; the untouched frame is grey there
    edge = frame.image[125:165, 161]
    assert (edge[:, 0].astype(int) - edge[:, 1].astype(int)).min() > 100
    assert not np.array_equal(frame.image, native)
    # the crop: box x 160..224, y 120..168 plus a 15 % margin (9.6 and 7.2 px) = x 150..234, y 112..176
    # (edges rounded outwards), enlarged to 512 px wide
    assert max(crop.image.shape[:2]) == CROP_SIDE
    assert crop.image.shape[0] == pytest.approx(CROP_SIDE * (176 - 112) / (234 - 150), abs=2)
    region = native[112:176, 150:234].astype(float)
    assert abs(crop.image.astype(float).mean() - region.mean()) < 3


def test_boxed_range_keeps_frames_even_in_clip_mode(friday: Path) -> None:
    cfg = EvidenceConfig(visual_as="clip", fps=1, max_frames=3)
    ev = build_evidence(friday, _boxed("(visual, 0:01-0:03, box1000=100,100,900,900 or box 0.1,0.1,0.2,0.2)", friday),
                        cfg)
    (s,) = ev.segments
    assert s.clip_path is None and len(s.frames) == 3
    assert len(s.crops) == 3 * 2  # one crop per box per frame
    assert [c.time for c in s.crops] == [f.time for f in s.frames for _ in range(2)]


def test_plan_carries_boxes_and_box_free_plans_are_unchanged(friday: Path) -> None:
    from murgat.media.evidence import plan_segments

    plain, boxed = plan_segments(friday, _boxed("(visual, 0:01; visual, 0:01, boxpx 0,0,320,240)", friday))
    assert plain.boxes == () and plain.label == "visual 0:01"
    assert boxed.boxes == ((0.0, 0.0, 0.5, 0.5),) and boxed.label.endswith("box 0.000,0.000,0.500,0.500")


def test_pixel_box_past_the_native_frame_is_invalid(friday: Path) -> None:
    (c,) = _boxed("(visual, 0:01, boxpx 0,0,700,240)", friday)
    assert not c.valid and "pixels past the 640x480 frame" in (c.reason or "")
