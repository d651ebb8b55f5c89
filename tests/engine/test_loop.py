"""The one item loop and run folder (#21): edited items are redone, records are read in input
order, an exception in one item is that item's error record, kinds are recorded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from murgat.core.schema import Item
from murgat.engine.folder import RunFolder, read_kind
from murgat.engine.loop import item_digest, plan_work, run_items, same_work
from murgat.engine.outcome import ItemFailure


class EchoTask:
    """Answers each item with its response reversed after a delay that finishes items out of order."""

    pool = None

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def run(self, item: Item) -> dict:
        await asyncio.sleep(0.01 * (5 - int(item.id[1:]) % 5))
        if item.response == "boom":
            raise RuntimeError("exploded")
        self.ran.append(item.id)
        return {"id": item.id, "out": item.response[::-1]}

    def error_record(self, item: Item, failure: ItemFailure) -> dict:
        return {"id": item.id, "error": failure.line}

    def digest(self, item: Item) -> str:
        return item_digest(item)


def _items(texts: list[str]) -> list[Item]:
    return [Item(id=f"i{k}", response=t) for k, t in enumerate(texts)]


def _run(task: EchoTask, items: list[Item], folder: RunFolder, retry: bool = False):
    p = plan_work(items, folder, task.digest, retry)
    asyncio.run(run_items(task, p.todo, folder, task.digest, concurrency=4))
    return p


def test_edited_items_are_redone_and_unchanged_ones_kept(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run", record=None)
    task = EchoTask()
    _run(task, _items(["a", "b", "c"]), folder)
    assert sorted(task.ran) == ["i0", "i1", "i2"]
    task2 = EchoTask()
    p = _run(task2, _items(["a", "B!", "c"]), folder)
    assert p.n_edited == 1 and p.edited_ids == ["i1"] and task2.ran == ["i1"]
    recs = {r["id"]: r for r in folder.latest_results()}
    assert recs["i1"]["out"] == "!B"


def test_records_written_before_digests_are_kept(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run", record=None)
    folder.append_many([{"id": "i0", "out": "old"}])
    task = EchoTask()
    p = _run(task, _items(["changed"]), folder)
    assert p.n_done == 1 and task.ran == []


def test_input_order_whatever_the_completion_order(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run", record=None)
    items = _items([str(k) for k in range(10)])
    _run(EchoTask(), items, folder)
    written = [json.loads(ln)["id"] for ln in folder.results_path.read_text().splitlines()]
    assert written != [it.id for it in items]  # completion order differs (the delays reverse it)
    assert [r["id"] for r in folder.latest_results(order=[it.id for it in items])] == [it.id for it in items]
    folder.compact([it.id for it in items])
    assert [json.loads(ln)["id"] for ln in folder.results_path.read_text().splitlines()] == [it.id for it in items]


def test_an_exception_is_that_items_error_record(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run", record=None)
    _run(EchoTask(), _items(["a", "boom", "c"]), folder)
    recs = {r["id"]: r for r in folder.latest_results()}
    assert recs["i1"]["error"].startswith("internal_error: RuntimeError: exploded")
    assert recs["i0"]["out"] == "a" and recs["i2"]["out"] == "c"
    task = EchoTask()
    p = _run(task, _items(["a", "boom", "c"]), folder, retry=True)
    assert p.n_retried == 1


def test_media_found_later_is_not_an_edit() -> None:
    item = Item(id="x", response="r")
    assert same_work(item_digest(item), item_digest(item, "abc"))
    assert not same_work(item_digest(item, "abc"), item_digest(item, "abd"))
    assert not same_work(item_digest(item), item_digest(Item(id="x", response="other")))


def test_corrupt_middle_line_of_a_dict_stream_is_quarantined(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    out.mkdir()
    (out / "responses.jsonl").write_text('{"id": "a", "response": "x"}\n{not json\n{"id": "b", "response": "y"}\n')
    folder = RunFolder(out, record=None, results="responses.jsonl")
    assert [r["id"] for r in folder.latest_results()] == ["a", "b"]
    assert "corrupt" in folder.notices[0] and (out / "responses.corrupt.jsonl").exists()


def test_kind_is_recorded_and_a_folder_of_another_kind_refused(tmp_path: Path) -> None:
    import pytest

    from murgat.engine.folder import RunConfigMismatch

    folder = RunFolder(tmp_path / "run")
    folder.check_config({"a": 1}, {}, kind="faithfulness")
    assert read_kind(tmp_path / "run") == "faithfulness"
    with pytest.raises(RunConfigMismatch, match="'faithfulness' run"):
        RunFolder(tmp_path / "run").check_config({"a": 1}, {}, kind="score")


def test_compact_keeps_lines_byte_identical_and_blank_lines_do_not_shift(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    lines = ['{"id": "b", "v": 1}', "", '{"id": "a", "v": "\\u2028x"}', '{"id": "b", "v": 2}']
    (out / "results.jsonl").write_text("\n".join(lines) + "\n")
    folder = RunFolder(out, record=None)
    folder.compact(["a", "b"])
    assert (out / "results.jsonl").read_text().splitlines() == ['{"id": "a", "v": "\\u2028x"}', '{"id": "b", "v": 2}']


def test_a_line_that_is_not_utf8_is_moved_aside_and_good_lines_stay(tmp_path: Path) -> None:
    """Before: one bad byte made every command on the folder stop with UnicodeDecodeError."""
    out = tmp_path / "run"
    out.mkdir()
    good = '{"id": "a", "response": "caf\\u00e9 ok", "v": 1}'
    (out / "results.jsonl").write_bytes(good.encode() + b"\n" + b'{"id": "b", "x": "\xff\xfe"}\n')
    folder = RunFolder(out, record=None)
    assert [r["id"] for r in folder.latest_results()] == ["a"]
    assert "not UTF-8" in folder.notices[0]
    assert (out / "results.jsonl").read_bytes() == good.encode() + b"\n"
    assert (out / "results.corrupt.jsonl").exists()


def test_a_bare_id_line_is_not_a_finished_item(tmp_path: Path) -> None:
    """Before: {"id": X} counted as done (score: 'scored' with no scores; program/reflect: KeyError)."""
    from murgat.engine.folder import PairFolder

    out = tmp_path / "run"
    out.mkdir()
    (out / "results.jsonl").write_text('{"id": "a"}\n{"id": "b", "record": {"id": "b"}, "trace": {"id": "b"}}\n')
    folder = PairFolder(out)
    assert [r["id"] for r in folder.latest_results()] == ["b"]
    score = tmp_path / "score"
    score.mkdir()
    (score / "results.jsonl").write_text('{"id": "a"}\n')
    assert RunFolder(score).latest_results() == []


def test_bookkeeping_fields_are_not_edits() -> None:
    """Before: a generate output scored again after its 'cached' flag flipped was rescored whole."""
    a = Item(id="x", response="r", question="q", cached=False, usage={"input_tokens": 1}, input_digest="1")
    b = Item(id="x", response="r", question="q", cached=True, usage={"input_tokens": 9}, input_digest="2")
    assert item_digest(a) == item_digest(b)
    assert item_digest(a) != item_digest(Item(id="x", response="r2", question="q"))


class SharingTask:
    """Ten items, each asking one question through a real :class:`CallPool`; items i3 and i4 ask the
    same question (one request), and i3 gives up on it after a short time limit of its own."""

    def __init__(self) -> None:
        from murgat.judging.pool import CallPool

        self.pool = CallPool()
        self.release = asyncio.Event()
        self.sent = 0

    name = "shared-judge"

    def key(self, req) -> str:  # type: ignore[no-untyped-def]
        return str(req.inputs["q"])

    async def generate(self, req, materialize=None):  # type: ignore[no-untyped-def]
        from murgat.judges.types import JudgeOutput

        self.sent += 1
        if req.inputs["q"] == "shared":
            await self.release.wait()
        return JudgeOutput(text=f"answer {req.inputs['q']}")

    async def run(self, item: Item) -> dict:
        from murgat.judges.types import JudgeRequest, TextPart

        q = "shared" if item.id in ("i3", "i4") else item.id
        req = JudgeRequest(parts=[TextPart(q)], inputs={"q": q})
        if item.id == "i3":
            try:
                async with asyncio.timeout(0.001):  # in the item's own task: it asked first, so it sent the request
                    await self.pool.ask(self, req)
            finally:
                self.release.set()
        out = await self.pool.ask(self, req)
        return {"id": item.id, "out": out.text}

    def error_record(self, item: Item, failure: ItemFailure) -> dict:
        return {"id": item.id, "error": failure.line}


def test_an_item_timing_out_in_a_shared_request_leaves_its_neighbour_its_answer(tmp_path: Path) -> None:
    """Nine correct records and one error record, never a worker dying without a line."""
    folder = RunFolder(tmp_path / "run", record=None)
    task = SharingTask()
    items = _items(["x"] * 10)
    asyncio.run(run_items(task, items, folder, item_digest, concurrency=10))  # type: ignore[arg-type]
    recs = {r["id"]: r for r in folder.latest_results()}
    assert sorted(recs) == sorted(f"i{k}" for k in range(10))
    assert "TimeoutError" in recs["i3"]["error"]
    assert recs["i4"]["out"] == "answer shared"
    assert all(recs[f"i{k}"]["out"] == f"answer i{k}" for k in range(10) if k not in (3, 4))
    assert task.sent == 9  # one request for the two items sharing it


class CancelledInside(EchoTask):
    """An item whose work raises ``CancelledError`` from inside (something it awaited was cancelled)."""

    async def run(self, item: Item) -> dict:
        if item.response == "cancelled":
            raise asyncio.CancelledError()
        return await super().run(item)


def test_a_cancellation_from_inside_an_item_is_its_error_record(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run", record=None)
    _run(CancelledInside(), _items(["a", "cancelled", "c", "d"]), folder)
    recs = {r["id"]: r for r in folder.latest_results()}
    assert sorted(recs) == ["i0", "i1", "i2", "i3"]
    assert "cancelled inside the item" in recs["i1"]["error"]
