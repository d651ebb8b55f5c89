"""What every run command shares, once: the one lifecycle that runs a command's declaration
(:mod:`~murgat.engine.command`), the run folder (:mod:`~murgat.engine.folder`), the item loop
(:mod:`~murgat.engine.loop`), the media preflight (:mod:`~murgat.engine.preflight`), the settings
groups and the parser made from them (:mod:`~murgat.engine.options`), the fingerprint the settings
carry (:mod:`~murgat.engine.fingerprint`), the judges of a run's roles (:mod:`~murgat.engine.roles`),
the typed errors a run stops with (:mod:`~murgat.engine.errors`), the guards around a run's outputs
(:mod:`~murgat.engine.guards`), its progress bar (:mod:`~murgat.engine.progress`), how items fail and
runs end (:mod:`~murgat.engine.outcome`) and the finished run read back (:mod:`~murgat.engine.runs`)."""
