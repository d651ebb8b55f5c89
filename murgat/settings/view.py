"""``ViewSettings``: every setting of ``murgat view`` (the offline viewer of a run, or 2..N score runs item by
item)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

import murgat.engine.options as o


class ViewSettings(o.Settings, o.GroupBy):
    """``murgat view RUN [RUN ...] [--out FILE] [options]``."""

    command: ClassVar[str] = "view"

    runs: list[str] = Field(description="one murgat run folder, or 2..N score runs to compare item by item",
                            json_schema_extra={"positional": True})
    out: str | None = Field(None, description="HTML file to write (default: RUN/report.html, or FIRST_RUN/compare.html "
                                              "for several)")
    media_root: str | None = Field(None, description="where the media are (default: the one the run was scored with)")
    copy_media: bool = Field(False, description="copy the media next to the report so the folder is portable")
    save_evidence: bool = Field(False, description="save each cited segment's frame (JPEG) or sound (WAV) under "
                                                   "RUN/evidence/ and show it")
    allow_media_outside_root: bool = Field(False, description="copy media and evidence wherever the run names them "
                                                              "(default: only inside --media-root, as scoring)")
    human: str | None = Field(None, description="human labels of a random sample of the (first) run: its panel shows "
                                                "the judge's figures corrected with them (as murgat calibrate --human "
                                                "LABELS --run RUN)", json_schema_extra={"metavar": "LABELS"})
    assume_random: bool = Field(False, description="with --human: treat labels that record no sampling design as a "
                                                   "random sample (said on the page)")
    cluster_by_video: bool = Field(False, description="with --human: videos are the sampling unit")
