"""What an answer button carries: the pause it answers and which proposal its message showed.

A question that needs several approvals (a role's ``required_approvals``) can have its proposal
replaced by an approver's edit while another approver still looks at the message as it was
(``chat.update`` follows the edit, it does not come with it). So an answer button's value says
which proposal the surface showed (``PauseView.shown_round``), and the approval is checked
against it (``App.answer(shown_round=)``): a click on the old message is refused, never counted
for the new proposal. The value is ``<pause id>`` or ``<pause id>:<round>``; a question one
answer closes has only its own proposal, so its buttons carry the pause id alone, as every
message posted before rounds were carried does. A value without a round stands for the
question's own proposal (round 0): for a question whose proposal was replaced since, such a
click is refused as one that may have seen an older proposal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from bot.core.results import PauseView, PendingPause

_SEPARATOR: Final = ":"  # never in a pause id (hex)
_MAX_ROUND_DIGITS: Final = 6


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """Which question an answer surface showed, and which of its proposals."""

    pause_id: str
    round: int | None = None
    """The proposal shown (``PauseView.shown_round``); None: the value did not say (the
    question's own proposal, or a message posted before values carried it)."""

    @property
    def checked_round(self) -> int:
        """The proposal an approval from this surface is checked against."""
        return 0 if self.round is None else self.round

    def __repr__(self) -> str:  # never print the pause id
        return f"Shown(round={self.round!r})"


def shown_round_of(pause: PauseView | PendingPause) -> int | None:
    """What a surface showing ``pause`` now carries: its proposal's round, for a question that
    needs several approvals (None for one an answer closes: it has only its own)."""
    return pause.shown_round if pause.required_approvals > 1 else None


def answer_value(pause_id: str, shown_round: int | None) -> str:
    """An answer button's value."""
    return pause_id if shown_round is None else f"{pause_id}{_SEPARATOR}{shown_round}"


def read_answer_value(value: str) -> Shown:
    """The question and proposal an answer button's ``value`` names (a plain pause id: a value
    without a round)."""
    pause_id, separator, suffix = value.rpartition(_SEPARATOR)
    number = suffix.isascii() and suffix.isdigit() and len(suffix) <= _MAX_ROUND_DIGITS
    if separator and pause_id and number:
        return Shown(pause_id=pause_id, round=int(suffix))
    return Shown(pause_id=value)
