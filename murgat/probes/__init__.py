"""Judge probes: does the judge see and hear what murgat sends?

murgat makes a short clip whose every second it knows (:mod:`murgat.probes.clip`, made by
:mod:`murgat.probes.media`), asks the judge a dozen claims about it with known answers
(:mod:`murgat.probes.probeset`) through the very path a run asks it (:mod:`murgat.probes.paths`),
and reads the outcomes
(:mod:`murgat.probes.results`, :mod:`murgat.probes.runner`). ``murgat judge check`` prints them
(:mod:`murgat.judge_check`); run commands call :func:`murgat.probes.runner.probes_before_run`
before their first item.
"""
