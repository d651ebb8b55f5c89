"""Gemini's server-side clipping (``-J visual=offsets``) samples the frames the record says were sent.

A visual range is shown by at most ``--max-frames`` frames; with offsets the server samples the
range itself at the ``fps`` it is sent. It was sent ``--fps`` whatever the cap, so a 30-minute range
was 1,800 frames server-side while the record said 8. Recorded exchanges in the real wire format
(the google-genai SDK against :mod:`tests.judges.wire`, as ``test_gemini_wire`` does).
"""

from __future__ import annotations

from murgat.judges.gemini import offsets_fps
from murgat.judges.types import JudgeRequest, TextPart, VideoPart
from tests.conftest import real_media
from tests.judges.test_gemini_wire import answer, frames, gen_bodies, make, upload_routes
from tests.judges.wire import Wire, ok


async def test_a_capped_range_asks_the_server_for_as_many_frames_as_were_noted() -> None:
    wire = upload_routes(Wire(), ["ACTIVE"]).queue(ok(answer("yes")))
    j = make(wire)
    capped = VideoPart(source=str(real_media("friday.mp4")), start=0.0, end=6.0, fps=1.0, frames=frames([0, 3, 6]))
    await j.generate(JudgeRequest(parts=[TextPart("[visual 0:00-0:06]"), capped], task="entail"))
    (body,) = gen_bodies(wire)
    meta = body["contents"][0]["parts"][1]["videoMetadata"]
    assert meta == {"startOffset": "0.000s", "endOffset": "6.000s", "fps": 0.5}  # 3 frames over 6 s, not 7
    await j.aclose()


def test_a_range_the_cap_did_not_touch_keeps_its_fps() -> None:
    src = str(real_media("friday.mp4"))
    assert offsets_fps(VideoPart(source=src, start=4.0, end=6.0, fps=1.0, frames=frames([4, 5, 6]))) == 1.0
    assert offsets_fps(VideoPart(source=src, start=0.0, end=1800.0, fps=1.0, frames=frames([0] * 8))) == 8 / 1800
