"""The MURGAT-S scoring pipeline: stages, orchestration, runs on disk, reports."""
