"""What every run command shares, once: the run folder (:mod:`~murgat.engine.folder`), the item loop
(:mod:`~murgat.engine.loop`), the media preflight (:mod:`~murgat.engine.preflight`), the settings
groups and the parser made from them (:mod:`~murgat.engine.options`), the guards around a run
(:mod:`~murgat.engine.guards`), its progress bar (:mod:`~murgat.engine.progress`), the rule that
decides a finished run failed (:mod:`~murgat.engine.outcome`) and the finished run read back
(:mod:`~murgat.engine.runs`)."""
