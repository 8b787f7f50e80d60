"""The answers a question offers: only those its asker takes (``ToolCallApprovalAsk.allows_kind``).

An asker may take fewer answers than approve, reject and edit (an attached LangGraph agent's
``allowed_decisions``), or one more: ``respond``, a text answer given in place of the tool.
Edit & approve needs the tool's input model too (the form or modal is made from its fields),
a free-text reply the role's reply interpreter. Where the asker takes ``respond`` that is the
one free-text answer offered: a text is never read two ways. Every channel shows a control per
answer offered and refuses any other before anything is answered; the runtime checks it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import BaseModel

from bot.core.dtos import ToolCallApprovalAsk, takes_kind
from channels.kit.texts import not_offered as _not_offered

Action = Literal["approve", "reject", "edit", "respond", "reply"]
ACTIONS: Final[tuple[Action, ...]] = ("approve", "reject", "edit", "respond", "reply")
_NAMES: Final = {"respond": "answer instead"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Offered:
    """Which answers a waiting question offers."""

    approve: bool = True
    reject: bool = True
    edit: bool = True
    respond: bool = False
    reply: bool = False  # free text, read by the role's reply interpreter

    def allows(self, action: str) -> bool:
        """Whether an answer of ``action`` (one of ``ACTIONS``) is offered."""
        return action in ACTIONS and bool(getattr(self, action))

    @property
    def decisions(self) -> tuple[str, ...]:
        """The answers offered, for a person: ``approve, reject``."""
        kinds = ("approve", "reject", "edit", "respond")
        return tuple(_NAMES.get(k, k) for k in kinds if getattr(self, k))


def editable(model: type[BaseModel] | None) -> bool:
    """Whether a question can be edited: the tool's input model is known and has fields."""
    return model is not None and bool(model.model_fields)


def offered(
    allowed_decisions: ToolCallApprovalAsk | Sequence[str] | None,
    *,
    tool_input: type[BaseModel] | None,
    reads_replies: bool = False,
) -> Offered:
    """What to offer for a question whose asker takes ``allowed_decisions`` (the ask itself,
    or its ``allowed_decisions``; None: approve, reject and edit)."""
    taken = (
        allowed_decisions.allowed_decisions
        if isinstance(allowed_decisions, ToolCallApprovalAsk)
        else None
        if allowed_decisions is None
        else tuple(allowed_decisions)
    )
    return Offered(
        approve=takes_kind(taken, "approve"),
        reject=takes_kind(taken, "reject"),
        edit=takes_kind(taken, "edit") and editable(tool_input),
        respond=takes_kind(taken, "respond"),
        reply=reads_replies and not takes_kind(taken, "respond"),  # one free-text answer
    )


def action_of(text: str) -> Action | None:
    """The action a form names, if it is one."""
    return next((action for action in ACTIONS if text == action), None)


def not_offered(offers: Offered) -> str:
    """What a person is told when they answer in a way the question does not take."""
    return _not_offered(offers.decisions)
