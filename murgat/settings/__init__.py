"""What each command takes: one pydantic settings model per command (``ScoreSettings``, …), the one source of
the command line (its parser is made from the fields), the Python API's keyword arguments and the generated command
reference. Below the commands (a command may read another's settings, e.g. ``judge check`` resolves the judge as
``score`` would), above the engine whose option groups they combine."""
