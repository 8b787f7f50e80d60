"""Everything the listeners call, built once per bot and handed to each listener module."""

from __future__ import annotations

from dataclasses import dataclass

from bot.app import App
from channels.slack.answering import Answering
from channels.slack.batch_flows import BatchFlows
from channels.slack.conversations import Conversations
from channels.slack.delegations import SlackDelegations
from channels.slack.feedback import Feedback
from channels.slack.flows import Flows
from channels.slack.grant_flows import GrantFlows
from channels.slack.handing import SlackHanding
from channels.slack.home import HomeTabs
from channels.slack.home_settings import HomeSettings
from channels.slack.late_answers import LateAnswers
from channels.slack.store import SlackMessageStore
from channels.slack.tasks import BackgroundTasks
from channels.slack.turn_answers import TurnAnswers


@dataclass(frozen=True, slots=True, kw_only=True)
class SlackServices:
    app: App
    answering: Answering
    conversations: Conversations
    flows: Flows
    batches: BatchFlows
    grants: GrantFlows
    home: HomeTabs
    messages: SlackMessageStore
    tasks: BackgroundTasks
    late: LateAnswers
    turns: TurnAnswers
    """A turn message's "Approve all" (``channels.slack.turn_messages``)."""
    settings: HomeSettings | None = None
    """The Home's per-workspace settings (installed by OAuth; ``None``: .env's alone)."""
    handing: SlackHanding
    delegations: SlackDelegations
    """The Home's standing delegations (and the delegate told of them)."""
    feedback: Feedback
