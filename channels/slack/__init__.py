"""The Slack channel, in one folder: outbound, inbound, rendering, its settings and tables.

- outbound: ``slack_channel(Role, ...)`` (``channel.py``) makes the Slack implementation of a
  role; its ``send`` posts the question, its ``withdraw`` updates the message.
- inbound: ``SlackBot(app, SlackSettings(...))`` (``bot.py``) serves an App in Slack: the Bolt
  listeners (``listeners/``) translate clicks, modal submissions and thread replies into one
  runtime call each and render what it returns.
- rendering (``render*.py``) is pure: Block Kit in, no I/O.

Nothing below this package imports it (a contract checked in CI, ``.importlinter``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from channels.slack.bot import SlackBot
    from channels.slack.channel import SlackChannel, slack_channel
    from channels.slack.gateway import SlackGateway
    from channels.slack.settings import SlackSettings, load_slack_settings
    from channels.slack.threads import SlackThread

__all__ = [
    "SlackBot",
    "SlackChannel",
    "SlackGateway",
    "SlackSettings",
    "SlackThread",
    "load_slack_settings",
    "slack_channel",
]

_EXPORTED_FROM: dict[str, str] = {
    "SlackBot": "channels.slack.bot",
    "SlackChannel": "channels.slack.channel",
    "SlackGateway": "channels.slack.gateway",
    "SlackSettings": "channels.slack.settings",
    "SlackThread": "channels.slack.threads",
    "load_slack_settings": "channels.slack.settings",
    "slack_channel": "channels.slack.channel",
}
"""Where each public name lives, imported on first use: Bolt loads only with ``SlackBot``
and the channel, so the Slack settings are read (and a bad one told) before it loads."""


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTED_FROM, __all__)
