"""The Slack side of Countersign: the Bolt app, its listeners, Block Kit rendering, settings.

``SlackBot(app, SlackSettings(...))`` serves an App in Slack; ``channels.slack.slack_channel``
makes the Slack implementation of a role. Rendering (``bot.slack.render*``) is pure.
"""

from bot.slack.bot import SlackBot
from bot.slack.gateway import SlackGateway
from bot.slack.settings import SlackSettings, load_slack_settings
from bot.slack.threads import SlackThread

__all__ = ["SlackBot", "SlackGateway", "SlackSettings", "SlackThread", "load_slack_settings"]
