"""Boxes: normalised storage, converters from each convention, IoU and area by hand."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from murgat.core.boxes import (
    Box,
    BoxConvention,
    BoxError,
    box_area,
    box_from_1000,
    box_from_norm,
    box_from_px,
    box_iou,
    make_box,
    parse_frame_size,
    yxyx_to_xyxy,
)


def test_converters_agree_on_one_region() -> None:
    norm = box_from_norm(0.1, 0.2, 0.55, 0.8)
    k = box_from_1000(100, 200, 550, 800, raw="box1000=100,200,550,800")
    px = box_from_px(64, 96, 352, 384, 640, 480)
    for b in (k, px):
        assert b.coords() == pytest.approx(norm.coords())
    assert k.raw == "box1000=100,200,550,800"
    assert yxyx_to_xyxy([200, 100, 800, 550]) == (100, 200, 550, 800)
    assert make_box([200, 100, 800, 550], "1000", "yxyx").coords() == pytest.approx(norm.coords())


def test_area_and_iou_by_hand() -> None:
    a = Box(x1=0.0, y1=0.0, x2=0.5, y2=0.5)
    b = Box(x1=0.25, y1=0.25, x2=0.75, y2=0.75)
    assert box_area(a) == pytest.approx(0.25)
    # overlap 0.25 x 0.25 = 0.0625; union 0.25 + 0.25 - 0.0625 = 0.4375
    assert box_iou(a, b) == pytest.approx(0.0625 / 0.4375)
    assert box_iou(a, a) == pytest.approx(1.0)
    assert box_iou(a, Box(x1=0.5, y1=0.5, x2=1.0, y2=1.0)) == 0.0  # touching corners only


@pytest.mark.parametrize(("values", "units", "frame", "words"), [
    ([0.1, 0.2, 0.3], "norm", None, "four numbers"),
    ([0.5, 0.2, 0.3, 0.4], "norm", None, "x2 (0.3) is not greater than x1 (0.5)"),
    ([0.1, 0.4, 0.3, 0.4], "norm", None, "y2"),
    ([100, 200, 550, 800], "norm", None, "look like 0-1000: write box1000"),
    ([100, 200, 550, 1800], "norm", None, "values above 1"),
    ([-0.1, 0.2, 0.3, 0.4], "norm", None, "negative"),
    ([100, 200, 550, 1001], "1000", None, "above 1000"),
    ([10, 20, 300, 400], "px", None, "needs the frame size"),
    ([10, 20, 300, 500], "px", (640, 480), "pixels past the 640x480 frame"),
    ([float("nan"), 0.2, 0.3, 0.4], "norm", None, "finite"),
])
def test_bad_boxes_say_why(values: list[float], units: str, frame: tuple[int, int] | None, words: str) -> None:
    with pytest.raises(BoxError) as exc:
        make_box(values, units, "xyxy", frame)  # type: ignore[arg-type]
    assert words in exc.value.reason


def test_box_invariants_hold_for_every_instance() -> None:
    with pytest.raises(ValidationError):
        Box(x1=0.5, y1=0.0, x2=0.5, y2=1.0)
    with pytest.raises(ValidationError):
        Box(x1=0.0, y1=0.0, x2=1.2, y2=1.0)


def test_pixels_of_a_box_stay_inside_the_frame() -> None:
    b = Box(x1=0.0, y1=0.999, x2=0.0001, y2=1.0)
    x1, y1, x2, y2 = b.to_pixels(640, 480)
    assert 0 <= x1 < x2 <= 640 and 0 <= y1 < y2 <= 480


def test_frame_size_and_convention() -> None:
    assert parse_frame_size("1280x720") == (1280, 720)
    with pytest.raises(BoxError):
        parse_frame_size("1280")
    assert BoxConvention().is_default()
    conv = BoxConvention(units="px").with_native(640, 480)
    assert conv.frame_size == (640, 480)
    assert BoxConvention(frame_size=(320, 240)).with_native(640, 480).frame_size == (320, 240)
