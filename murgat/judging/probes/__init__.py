"""Judge probes: does the judge see and hear what murgat sends?

murgat makes a short clip whose every second it knows (:mod:`murgat.judging.probes.clip`, made by
:mod:`murgat.judging.probes.media`), asks the judge a dozen claims about it with known answers
(:mod:`murgat.judging.probes.probeset`) through the very path a run asks it (:mod:`murgat.judging.probes.paths`),
and reads the outcomes
(:mod:`murgat.judging.probes.results`, :mod:`murgat.judging.probes.runner`). ``murgat judge check`` prints them
(:mod:`murgat.commands.judge_check.check`); run commands call :func:`murgat.judging.probes.runner.probes_before_run`
before their first item.
"""
