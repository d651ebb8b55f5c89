"""``AnnotateSettings``: every setting of ``murgat annotate`` (a page for labelling a score or faithfulness run
by hand, optionally a random sample of it)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

import murgat.engine.options as o
from murgat.human_eval.sampling import check_seed


class AnnotateSettings(o.Settings):
    """``murgat annotate RUN --annotator NAME [--sample N [--by video | --strata FIELD] [--seed S]] [options]``."""

    command: ClassVar[str] = "annotate"

    run: str = Field(description="a murgat score run folder", json_schema_extra={"positional": True})
    annotator: str = Field(description="the name written into every exported label line")
    out: str | None = Field(None, description="HTML file to write (default: RUN/annotate-NAME.html)")
    media_root: str | None = Field(None, description="where the media are (default: the one the run was scored with)")
    copy_media: bool = Field(False, description="copy the media next to the page so the folder is portable")
    # no bound here: a --sample under 1 is the command's own error line (exit 2), said with the value given
    sample: int | None = Field(None, description="label a random sample: N items (or with --by video N videos), the "
                                                 "design recorded in the page and in every exported label line, as "
                                                 "murgat calibrate needs for corrected figures",
                               json_schema_extra={"metavar": "N"})
    by: Literal["video"] | None = Field(None, description="draw whole videos (every item of each): a cluster sample")
    strata: str | None = Field(None, description="draw within each value of this item field (e.g. task_type): a "
                                                 "stratified sample, split over the strata in proportion to their "
                                                 "sizes (two or more each) unless --allocation gives the counts; "
                                                 "murgat calibrate then estimates stratified",
                               json_schema_extra={"metavar": "FIELD"})
    allocation: str | None = Field(None, description="with --strata: the count of each stratum, LABEL=N,LABEL=N "
                                                     "or a JSON object (the line murgat calibrate --plan prints); "
                                                     "replaces --sample", json_schema_extra={"metavar": "COUNTS"})
    seed: str | None = Field(None, description="the sample's seed, kept as text (default: drawn at random and "
                                               "printed; give it to label the same sample)")

    @field_validator("seed")
    @classmethod
    def _seed(cls, value: str | None) -> str | None:
        """A seed names a sample by its text (no browser rounds it): 1 to 100 characters, no space or ``|``."""
        return None if value is None else check_seed(value)
