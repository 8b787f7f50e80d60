"""What a question's page offers: only the answers its asker takes.

An asker may take fewer answers than approve, reject and edit (an attached LangGraph agent's
``allowed_decisions``), or one more: ``respond``, a text answer given in place of the tool. The
page shows a form for each answer offered, and the server refuses a post for any other (a
forged form) before anything is read or answered; the runtime checks it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pydantic import BaseModel

from bot.core.dtos import ToolCallApprovalAsk
from channels.web.form import form_fields

Action = Literal["approve", "reject", "edit", "respond", "reply"]
ACTIONS: Final[tuple[Action, ...]] = ("approve", "reject", "edit", "respond", "reply")


@dataclass(frozen=True, slots=True, kw_only=True)
class Offered:
    """Which forms a waiting question's page shows."""

    approve: bool = True
    reject: bool = True
    edit: bool = True
    respond: bool = False
    reply: bool = False  # free text, read by the role's reply interpreter

    def allows(self, action: Action) -> bool:
        return bool(getattr(self, action))

    @property
    def decisions(self) -> tuple[str, ...]:
        """The answers offered, for a person: ``approve, reject``."""
        names = {"respond": "answer instead"}
        kinds = ("approve", "reject", "edit", "respond")
        return tuple(names.get(k, k) for k in kinds if getattr(self, k))


def offered(
    ask: ToolCallApprovalAsk, *, tool_input: type[BaseModel] | None, reads_replies: bool
) -> Offered:
    """What to offer for ``ask``: Edit & approve needs the tool's input model too (the form is
    made from its fields), a free-text answer the role's reply interpreter."""
    editable = tool_input is not None and bool(form_fields(tool_input))
    return Offered(
        approve=ask.allows_kind("approve"),
        reject=ask.allows_kind("reject"),
        edit=ask.allows_kind("edit") and editable,
        respond=ask.allows_kind("respond"),
        reply=reads_replies,
    )


def action_of(text: str) -> Action | None:
    """The action a form names, if it is one."""
    for action in ACTIONS:
        if text == action:
            return action
    return None


def not_offered(offers: Offered) -> str:
    """What a person is told when a form answers in a way the question does not take."""
    taken = ", ".join(offers.decisions) or "no answer from this page"
    return f"This request does not take that answer (it takes: {taken}). It still waits."
