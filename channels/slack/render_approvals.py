"""The approval message's lines about a question that needs several approvals: who approved,
who changed the proposal, how many more are needed (the kit's lines, with Slack mentions)."""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import Block, ContextBlock

from channels.slack.render import MAX_SECTION_TEXT, mrkdwn, truncate


def approvals_blocks(lines: Sequence[str]) -> list[Block]:
    """One context line for them (none for a question one answer closes)."""
    if not lines:
        return []
    text = truncate(" · ".join(lines), MAX_SECTION_TEXT)
    return [ContextBlock(elements=[mrkdwn(f":busts_in_silhouette: {text}")])]
