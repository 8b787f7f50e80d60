"""``bot.slack``: the name the design gave the Slack bot, kept working.

The Slack channel lives in one folder, ``channels.slack``; this package only hands its public
names on (``bot.slack.SlackBot(app, SlackSettings(...))`` keeps working). It stands in the top
layer beside the CLI: nothing in the library imports it.
"""

from channels.slack import SlackBot, SlackGateway, SlackSettings, SlackThread, load_slack_settings

__all__ = ["SlackBot", "SlackGateway", "SlackSettings", "SlackThread", "load_slack_settings"]
