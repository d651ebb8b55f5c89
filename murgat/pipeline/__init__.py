"""Deprecated import paths of earlier versions: the score command's package is :mod:`murgat.score`
and what every command that asks a judge about media shares is :mod:`murgat.judging`.

The modules here (``config``, ``rundir``, ``runner``, ``settings``, ``stages``, ``command``,
``report``, ``cli``) re-export the names they held, so code written against earlier versions keeps
working for now; importing any of them warns once (``DeprecationWarning``). Run folders never named
this package: every folder written by any version is read by :mod:`murgat.score` as it is.
"""

import warnings

warnings.warn("murgat.pipeline is deprecated: the score command is murgat.score, the shared judging pieces "
              "murgat.judging (call pool, item context, entailment)", DeprecationWarning, stacklevel=2)
