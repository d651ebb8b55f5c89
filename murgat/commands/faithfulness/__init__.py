"""Step faithfulness of reasoning chains: ``murgat faithfulness`` (segment, label, UPR). The step labeller is
:mod:`murgat.judging.steps`, the step records :mod:`murgat.core.steps`, UPR :mod:`murgat.core.upr`."""
