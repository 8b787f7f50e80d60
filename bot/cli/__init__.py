"""The command line of Countersign (``python -m bot``): sub-commands ``serve`` and ``demo``."""

from bot.cli.main import main

__all__ = ["main"]
