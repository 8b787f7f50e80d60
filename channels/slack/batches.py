"""What a batch ("Approve all", "Approve selected", "Reject selected…") tells the person: one
line per question, in the kit's words (``channels.kit.batches``), as Slack mrkdwn."""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.answers import AnswerOutcome
from channels.kit.batches import BatchAction, batch_lines
from channels.kit.texts import NO_LONGER_AVAILABLE
from channels.slack.gateway import SlackGateway
from channels.slack.render import escape, mention


def batch_reply(
    gateway: SlackGateway,
    outcomes: Sequence[AnswerOutcome],
    user: str,
    action: BatchAction = "approve",
) -> str:
    """The lines of a batch ``user`` approved or rejected (who answered a skipped one: a
    mention)."""

    def title(outcome: AnswerOutcome) -> str:
        pause = outcome.pause
        return NO_LONGER_AVAILABLE if pause is None else gateway.approval_view(pause).title

    def name(who: str) -> str:
        return "you" if who == user else mention(who)

    lines = batch_lines(outcomes, action, title=title, name=name)
    return "\n".join(f"• *{escape(line.title, 150)}*: {line.text}" for line in lines)
