"""Answer-token caps sized to what each judge prompt asks for.

A judge's yes/no answer is a few tokens, yet every judge request went out with the shared
``--max-tokens`` default of 1,024. On a server that does not cancel abandoned requests
(``transformers serve`` keeps generating after the client's timeout) a model that rambles then
holds the server for 1,024 tokens per request: 12 generations piled up, latencies of 81-477 s.
:data:`ANSWER_TOKENS` is the cap each request kind needs, with room for a short preamble; a
command applies it with :func:`sized_for` when the user did not pass ``--max-tokens`` (an explicit
value always wins). Requests with a reasoning effort keep the given cap: thinking text counts in
the cap on servers that put it in the answer (vLLM's hybrid-thinking models).

A sized cap changes what the server is sent, but not what a finished answer is: generation stops
at the cap and nowhere else, so an answer that ended on its own within the smaller cap is token for
token the answer to the request with the larger one. The cache key therefore keeps the configured
cap (:func:`sized_request`): answers cached under 1,024 keep answering when they fit the sized cap
(the server's count of answer tokens), and an answer that ran longer is asked again with the
sized cap (:func:`murgat.judges.base.fits_cap`). An answer that hits a cap is marked truncated and
read as unparseable, never as a verdict, and is never cached.
"""

from __future__ import annotations

from murgat.judges.types import GenerateConfig

#: (task, prompt variant) -> answer tokens; a task without an entry keeps the configured cap
ANSWER_TOKENS: dict[tuple[str, str], int] = {
    ("verify", "simple"): 256,   # "Answer with one word: yes or no."
    ("verify", "json"): 384,     # {"reason": "<one sentence>", "label": …}
    ("verify", "cot"): 1024,     # brief reasoning, then "Label: …"
    ("entail", "simple"): 256,
    ("entail", "json"): 384,
    ("entail", "cot"): 1024,
}


def answer_tokens(task: str, variant: str) -> int | None:
    """The cap a ``task`` request written with prompt ``variant`` needs, or ``None`` (no sizing)."""
    return ANSWER_TOKENS.get((task, variant))


def sized_for(config: GenerateConfig, task: str, variant: str) -> GenerateConfig:
    """``config`` with ``max_tokens`` lowered to the task's size (never raised); unchanged for a
    task with no size or a request with a reasoning effort other than ``none``."""
    size = answer_tokens(task, variant)
    if size is None or config.max_tokens <= size or config.reasoning_effort not in (None, "none"):
        return config
    return config.model_copy(update={"max_tokens": size})


def sized_request(config: GenerateConfig, task: str, variant: str,
                  sized: bool = True) -> tuple[GenerateConfig, GenerateConfig | None]:
    """``(config to send, config to key by)`` of a ``task`` request: with ``sized`` (the user gave no
    ``--max-tokens``) the cap :func:`sized_for` chooses is sent while the cache key keeps the
    configured cap (``JudgeRequest.key_config``; ``None`` when nothing was lowered). An answer that
    ended before the smaller cap is the answer to both requests, so answers cached before sizing
    keep answering; one that ran past it is asked again (:func:`murgat.judges.base.fits_cap`)."""
    if not sized:
        return config, None
    sent = sized_for(config, task, variant)
    return sent, (config if sent is not config else None)
