"""``python -m bot`` (and the ``countersign`` script): the command line, see ``bot.cli``."""

from bot.cli.main import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
