"""Grounding against gold evidence: annotated segments, pages and boxes next to MURGAT-S.

``gold`` holds the gold JSONL schema and its reader, ``importers`` the converters from
NExT-GQA, CiteVQA and ReXTime files, ``metric`` the pure metric functions (its docstring
is the spec), ``run`` the ``ground`` API, ``cli`` the commands.
"""
