"""``mock_of(Implementation)``: an instance whose methods are recording mocks.

Wherever the runtime would create the implementation (or a role that resolves to it), it gets
the mock. Defaults: ``send`` awaits a reply, ``withdraw`` does nothing, ``interpret`` does not
understand, ``run`` returns ``{"status": "ok"}``.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import AsyncMock, MagicMock

from bot.core.channel import ChannelOutcome
from bot.core.reply import ReplyInterpretation
from bot.runtime.model_overrides import set_instance_override

_DEFAULTS: dict[str, Any] = {
    "send": ChannelOutcome.await_reply(),
    "withdraw": None,
    "run": {"status": "ok"},
}


def mock_of(implementation: type) -> Any:
    mock = MagicMock(spec=implementation)
    for name in ("send", "withdraw", "run"):
        if hasattr(implementation, name):
            setattr(mock, name, AsyncMock(return_value=_DEFAULTS[name]))
    if hasattr(implementation, "interpret"):
        mock.interpret = MagicMock(
            return_value=ReplyInterpretation.not_understood(reason="mocked interpreter")
        )
    set_instance_override(implementation, mock)
    return mock
