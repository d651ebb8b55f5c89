"""Plan-then-execute programs (find / describe / synthesize) that ground answers by
construction. Planned: planners, a plan parser and allow-list validator, a safe AST
interpreter (never ``exec``/``eval``), tools, runtime attribution checks and citation
restoration. Nothing is implemented here yet.
"""
