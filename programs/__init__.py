"""Plan-then-execute programs (find / describe / synthesize) that ground answers by
construction.

``safety`` parses a planner's program with ``ast`` and checks it against an allow-list and
budgets; ``interpreter`` walks the checked tree (Python never runs it); ``extract`` finds the
program in a planner's prose; ``ops`` implements the three operations with the runtime
attribution check; ``runner`` plans, runs and assembles one item; ``cli`` is ``murgat program``.
"""
