"""``python -m murgat`` is the same as the ``murgat`` command (whose entry point is :func:`entry`)."""

import sys


def entry() -> None:
    """The command line, with a Ctrl-C while it is still importing (a cold start can spend seconds
    importing numpy, pydantic, the judges) ending as a Ctrl-C later does: one line and exit 130, no
    traceback. :func:`murgat.cli.run` handles the interrupts once it is running."""
    from murgat.media import stages  # light: it imports nothing else of murgat's

    stages.notice_start(sys.argv)  # "murgat score: starting" if the imports below take over a second
    try:
        from murgat.cli import run
    except KeyboardInterrupt:
        stages.cancel_notice()
        print("\ninterrupted while starting: nothing was done", file=sys.stderr)
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    entry()
