"""Scale-out on Ray (optional extra ``murgat[ray]``): ``--run-on ray`` for ``score`` and the
other item-by-item commands.

Nothing in the core imports Ray: this package imports it only when a command runs with
``--run-on ray``. What is shared and how (see :mod:`murgat.engine.scaleout.driver` and
:mod:`murgat.engine.scaleout.services`): the driver alone writes the run folder; one cache service
and one limit service, both on the driver's node, serve every worker; workers do the media
work (probe, decode, evidence, ASR/OCR/sound tags) and the judge calls for one media file's
items at a time and stream results back.
"""

from __future__ import annotations

