"""Everything the listeners call, built once per bot and handed to each listener module."""

from __future__ import annotations

from dataclasses import dataclass

from bot.app import App
from bot.slack.answering import Answering
from bot.slack.conversations import Conversations
from bot.slack.flows import Flows
from bot.slack.home import HomeTabs
from bot.slack.store import SlackMessageStore
from bot.slack.tasks import BackgroundTasks


@dataclass(frozen=True, slots=True, kw_only=True)
class SlackServices:
    app: App
    answering: Answering
    conversations: Conversations
    flows: Flows
    home: HomeTabs
    messages: SlackMessageStore
    tasks: BackgroundTasks
