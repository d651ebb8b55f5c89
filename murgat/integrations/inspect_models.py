"""``--model murgat/replay -M answers=FILE``: an inspect model that answers each sample with the response
a murgat input records for it — the offline model under test of the documented CLI example.

inspect's ``mockllm/model`` is the natural stand-in, but from the command line its outputs carry no
token usage, and inspect then counts the prompt's tokens with tiktoken's ``o200k_base`` encoding,
which tiktoken downloads on first use (``ModelAPI.count_text_tokens``; mockllm's
``_ensure_default_usage``): with the network cut every sample errors. This model reports its usage
itself (no tokens: nothing was generated, a recorded answer was read), so nothing is counted and
nothing is downloaded, and its answers are real cited answers, so the scorer has something to check.

The answer of a sample is the ``response`` of the item with the sample's id (any file ``murgat score``
reads: murgat JSONL, CSV, …); a sample with no such item fails naming it, never a made-up answer.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo


@cache
def _answers(path: str) -> dict[str, str]:
    from murgat.core.inputs import iter_items

    return {it.id: it.response for it in iter_items(Path(path)) if it.response is not None}


@modelapi(name="murgat")
class ReplayAnswers(ModelAPI):
    """``murgat/replay``: the recorded answers of ``-M answers=FILE`` (see the module docstring)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), answers: str | None = None, **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name != "replay":
            raise ValueError(f"murgat/{model_name}: the murgat model API serves 'replay' only (murgat/replay "
                             "-M answers=FILE)")
        if not answers:
            raise ValueError("murgat/replay needs -M answers=FILE (a murgat input whose responses are the answers)")
        self.answers = str(Path(answers).resolve())
        if not Path(self.answers).is_file():
            raise ValueError(f"murgat/replay: -M answers={answers}: no such file")

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        from inspect_ai.log._samples import sample_active  # the running sample: whose answer to give

        active = sample_active()
        sid = str(active.sample.id) if active is not None else None
        text = _answers(self.answers).get(sid) if sid is not None else None
        if text is None:
            raise ValueError(f"murgat/replay: {self.answers} records no response for sample {sid!r}")
        out = ModelOutput.from_content(model=f"murgat/{self.model_name}", content=text)
        out.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)  # set: inspect counts nothing
        return out
