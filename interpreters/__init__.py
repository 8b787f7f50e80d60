"""Built-in reply interpreters: they read a person's free-text reply to a pause."""

from interpreters.button_value import ButtonValueReplyInterpreter
from interpreters.keyword import KeywordReplyInterpreter

__all__ = ["ButtonValueReplyInterpreter", "KeywordReplyInterpreter"]
