"""What the task YAML's ``!function utils.…`` names: lmms-eval loads this file by its path, so it only
re-exports :mod:`murgat.integrations.lmms_eval.task` (imported once, whatever loads this file)."""

from murgat.integrations.lmms_eval.task import (
    agg_accuracy,
    agg_accuracy_ci,
    agg_attributed_accuracy,
    agg_attributed_accuracy_ci,
    agg_murgat_s,
    agg_murgat_s_ci,
    doc_to_messages,
    doc_to_target,
    doc_to_text,
    doc_to_visual,
    process_results,
)

__all__ = ["agg_accuracy", "agg_accuracy_ci", "agg_attributed_accuracy", "agg_attributed_accuracy_ci", "agg_murgat_s",
           "agg_murgat_s_ci", "doc_to_messages", "doc_to_target", "doc_to_text", "doc_to_visual", "process_results"]
