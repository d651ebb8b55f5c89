"""One media identity: what this process keeps decoded or open is keyed by the file's content.

A file replaced under the same name (a notebook scoring twice, the inspect scorer, a long-lived
Ray worker) used to be served from the decoded track and the open frame reader of the old file,
while the answers were cached under the new file's digest. Real files, real decoding, the
evidence path scoring uses (:meth:`~murgat.judging.context.ItemContext.evidence_for` through
:func:`~murgat.judging.entail.ask_entailment`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from murgat.core.schema import AtomicFact
from murgat.judges.scripted import ScriptedJudge
from murgat.judges.types import AudioPart, ImagePart, JudgeRequest
from murgat.judging.context import ItemContext
from murgat.judging.entail import ask_entailment
from murgat.judging.pool import CallPool
from murgat.judging.sentences import sentences_of
from murgat.media.cache import file_digest
from murgat.media.streams import probe
from murgat.settings.score_resolved import JudgeSpec, ScoreConfig


def _clip(path: Path, colour: str, tone_hz: int) -> Path:
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"color=c={colour}:size=64x48:rate=5",
                    "-f", "lavfi", "-i", f"sine=frequency={tone_hz}:sample_rate=16000", "-t", "3",
                    "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "1",
                    str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def red_and_blue(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("identity")
    return _clip(d / "red.mp4", "red", 440), _clip(d / "blue.mp4", "blue", 1760)


def _sent(media: Path) -> JudgeRequest:
    """The request scoring sends for one cited claim about ``media`` (a fresh item context each time)."""
    js = JudgeSpec(spec="scripted")
    cfg = ScoreConfig(judge_verify=js, judge_decompose=js, judge_entail=js)
    info = probe(media)
    (sent,) = sentences_of("It is red and hums (visual, 0:01; audio, 0:00-0:02).", info.durations(), 1.0)
    ctx = ItemContext(media=media, durations=info.durations(), config=cfg, _info=info)
    judge = ScriptedJudge(lambda req: "yes")
    fact = AtomicFact(index=0, sentence_index=0, text="It is red and hums.", citations=sent.citations)
    asyncio.run(ask_entailment(CallPool(), judge, fact, frozenset(range(len(sent.citations))), ctx))
    (req,) = judge.requests
    return req


def _colour(req: JudgeRequest) -> str:
    (img, *_) = [p for p in req.parts if isinstance(p, ImagePart) and p.image is not None]
    r, _, b = (float(c) for c in np.asarray(img.image).reshape(-1, 3).mean(axis=0))
    return "red" if r > b else "blue"


def _tone(req: JudgeRequest) -> float:
    (audio,) = [p for p in req.parts if isinstance(p, AudioPart)]
    spectrum = np.abs(np.fft.rfft(audio.samples))
    return float(np.argmax(spectrum) * audio.sr / len(audio.samples))


def test_a_file_replaced_under_the_same_name_sends_the_new_frames_and_audio(red_and_blue: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    red, blue = red_and_blue
    media = tmp_path / "clip.mp4"
    shutil.copyfile(red, media)
    first = _sent(media)
    assert (_colour(first), round(_tone(first), -2)) == ("red", 400.0)
    replacement = tmp_path / "new.mp4"
    shutil.copyfile(blue, replacement)
    os.replace(replacement, media)  # same path, new content (a new inode, as an editor or a download writes it)
    second = _sent(media)
    assert file_digest(media) == file_digest(blue)
    assert (_colour(second), round(_tone(second), -2)) == ("blue", 1800.0)
