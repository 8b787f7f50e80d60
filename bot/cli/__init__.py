"""The command line (``python -m bot``): ``serve``, ``demo``, ``keygen``, ``reencrypt``."""

from bot.cli.main import main

__all__ = ["main"]
