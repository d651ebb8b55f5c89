"""The core: pure records and rules every layer above reads — records, citations, the canonical text, answers,
boxes, the metric, inputs, JSONL, exports, datasets, breakdowns, agreement, corrected figures. It imports nothing of
murgat's but the leaves (media, prompts, human_eval)."""
