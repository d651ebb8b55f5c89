"""Evidence over a limit is sampled or refused, and the evidence says which (typed notes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import murgat.media.audio as ma
from murgat.core.citations import check_durations, parse_citations
from murgat.judges.evidence import evidence_parts, fit_request, limits_for, request_bytes
from murgat.judges.types import AudioPart, TextPart
from murgat.media.evidence import build_evidence, plan_notes, plan_segments
from murgat.media.limits import EvidenceLimits, choose_excerpts, count_notes
from murgat.media.streams import probe


def cites(text: str, path: Path):
    return check_durations(parse_citations(text), probe(path).durations())


def test_excerpts_spread_evenly_and_cover_both_ends() -> None:
    got = choose_excerpts([(0.0, 1800.0)], 300.0, 30.0)
    assert len(got) == 10 and got[0] == (0.0, 30.0) and got[-1] == (1770.0, 1800.0)
    assert all(b - a == pytest.approx(30.0) for a, b in got)
    steps = np.diff([a for a, _ in got])
    assert np.allclose(steps, steps[0])
    assert choose_excerpts([(5.0, 65.0)], 300.0) == [(5.0, 65.0)]  # under the budget: whole
    # two windows joined end to end; a piece crossing the gap is split there
    two = choose_excerpts([(0.0, 10.0), (100.0, 110.0)], 6.0, 2.0)
    assert sum(b - a for a, b in two) == pytest.approx(6.0)
    assert all(0 <= a < b <= 10 or 100 <= a < b <= 110 for a, b in two)


def test_thirty_minutes_of_audio_are_sampled_and_noted(long_video: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float | None] = []
    real = ma._decode

    def spy(p: str, stream: int, sr: int, seek: float | None = None, duration: float | None = None) -> np.ndarray:
        calls.append(duration)
        return real(p, stream, sr, seek, duration)

    monkeypatch.setattr(ma, "_decode", spy)  # ffmpeg runs from the file start: the seek check and chunk 0
    c = cites("(audio, 0:00-30:00)", long_video)
    (plan,) = plan_segments(long_video, c)
    assert plan.sampling_key() == {"excerpts": [list(x) for x in plan.excerpts]} and len(plan.excerpts) == 10
    ev = build_evidence(long_video, c)
    (s,) = ev.segments
    assert s.available and s.audio is not None and len(s.audio) == 300 * 16000 and len(s.excerpts) == 10
    assert None not in calls and sum(d for d in calls if d) <= 3 * ma.CHUNK_S  # the check and chunk 0, never the whole track
    assert s.note is not None and s.note.kind == "audio_sampled" and ev.notes == [s.note]
    assert s.note.text == ("30:00 of audio cited; 5:00 sent, sampled as 10 excerpts of 0:30 spread evenly "
                           "(0:00-0:30, 3:16.667-3:46.667, 6:33.333-7:03.333, …, 29:30-30:00); "
                           "limit: 5:00 of audio per request (murgat default)")
    parts = evidence_parts(ev, False)
    audio = [p for p in parts if isinstance(p, AudioPart)]
    assert [(p.start, p.end) for p in audio] == s.excerpts and all(len(p.samples) == 30 * 16000 for p in audio)
    assert any(isinstance(p, TextPart) and "only part of the cited audio is sent" in p.text for p in parts)


def test_over_limit_audio_can_be_refused_with_the_reason(long_video: Path) -> None:
    ev = build_evidence(long_video, cites("(audio, 0:00-30:00)", long_video),
                        limits=EvidenceLimits(over_limit="refuse"))
    (s,) = ev.segments
    assert not s.available and s.audio is None
    assert s.reason is not None and s.reason.startswith("30:00 of audio cited, more than 5:00; not sent")
    assert s.note is not None and s.note.kind == "refused"


def test_thirty_minutes_of_video_get_a_frames_note(long_video: Path) -> None:
    ev = build_evidence(long_video, cites("(visual, 0:00-30:00; visual, 0:10-0:14)", long_video))
    long_seg, short_seg = ev.segments
    assert len(long_seg.frames) == 8 and short_seg.note is None
    assert long_seg.note is not None and long_seg.note.kind == "frames_sampled"
    assert long_seg.note.text == ("30:00 of video cited; 8 frames sent, one every 4:17.143, of the 1,801 the span "
                                  "holds at the sampling rate; limit: --max-frames 8 at --fps 1")
    assert (long_seg.note.frames_sent, long_seg.note.frames_in_span) == (8, 1801)


def test_no_limits_means_the_old_behaviour(friday: Path) -> None:
    ev = build_evidence(friday, cites("(audio, 0:00-0:06)", friday), limits=None)
    assert ev.notes == [] and ev.segments[0].excerpts == []


def test_request_images_are_thinned_evenly(friday: Path) -> None:
    ev = build_evidence(friday, cites("(visual, 0:00-0:06; visual, 0:01-0:03; visual, 0:05)", friday))
    assert [len(s.frames) for s in ev.segments] == [7, 3, 1]
    fit = fit_request(ev, EvidenceLimits(max_images=5))
    assert [len(s.frames) for s in ev.segments] == [7, 3, 1]  # the input is not changed
    counts = [len(s.frames) for s in fit.segments]
    assert sum(counts) <= 5 and min(counts) >= 1
    kinds = [n.kind for n in fit.notes]
    assert kinds.count("images_capped") >= 2 and fit.request_notes[-1].text.startswith("11 images in this request; ")
    first = fit.segments[0]
    assert first.frames[0].time == 0.0 and first.frames[-1].time == pytest.approx(6.0, abs=0.05)  # ends kept
    refused = fit_request(ev, EvidenceLimits(max_images=2))
    assert all(not s.available for s in refused.segments) and refused.notes[-1].kind == "refused"


def test_request_audio_is_shared_in_proportion(friday: Path) -> None:
    ev = build_evidence(friday, cites("(audio, 0:00-0:04; audio, 0:04-0:06)", friday))
    fit = fit_request(ev, EvidenceLimits(max_audio_s=3.0, audio_excerpt_s=1.0))
    sent = [len(s.audio) / 16000 for s in fit.segments if s.audio is not None]
    assert sum(sent) == pytest.approx(3.0, abs=1e-3) and sent[0] == pytest.approx(2.0, abs=1e-3)
    assert fit.request_notes[0].kind == "audio_sampled" and fit.segments[0].excerpts


def test_request_bytes_are_capped_or_refused(friday: Path) -> None:
    ev = build_evidence(friday, cites("(visual, 0:00-0:06; audio, 0:00-0:06)", friday))
    full = request_bytes(ev.segments)
    fit = fit_request(ev, EvidenceLimits(max_request_bytes=full // 2))
    assert request_bytes(fit.segments) <= full // 2 and fit.request_notes[-1].kind == "bytes_capped"
    tiny = fit_request(ev, EvidenceLimits(max_request_bytes=1000))
    assert all(not s.available for s in tiny.segments) and "not sent" in (tiny.segments[0].reason or "")


def test_provider_limits_and_overrides() -> None:
    g, o, x = limits_for("gemini"), limits_for("openai"), limits_for("replay")
    assert g.max_request_bytes == 100_000_000 and g.max_images == 3600
    assert o.max_request_bytes == 50_000_000 and o.max_images == 500
    assert x.max_request_bytes == 20_000_000
    own = limits_for("openai", {"max_images": 16})
    assert own.max_images == 16 and "overridden: max_images=16" in own.source


def test_notes_are_known_from_the_plan_alone(long_video: Path) -> None:
    """A cached answer decodes nothing: its record gets the same notes from the plan."""
    c = cites("(audio, 0:00-30:00; visual, 0:00-30:00; visual, 1:00-1:04; visual, 2:00)", long_video)
    built = build_evidence(long_video, c)
    planned = plan_notes(plan_segments(long_video, c))
    assert [n.text for n in planned] == [n.text for n in built.notes]
    assert count_notes(built.notes) == {"frames_sampled": 1, "audio_sampled": 1}
