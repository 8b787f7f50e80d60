"""``COUNTERSIGN_GRAPH``'s graphs as an application, for Slack or for the web desk."""

from __future__ import annotations

from bot.served.application import ServedApplication, served_application
from bot.served.channels import slack_roles, web_roles
from bot.served.graphs import load_graphs
from bot.served.policies import load_policy
from bot.served.targets import ServedSettings


def slack_application(settings: ServedSettings) -> ServedApplication:
    """The graphs (imported and checked) and their roles, asked in Slack."""
    roles = slack_roles(settings.approval_channel, settings.approvers)
    return served_application(
        load_graphs(settings.graphs),
        answered_by=roles.answered_by,
        implement=roles.implement,
        policy=load_policy(settings.policy),
    )


def web_application(settings: ServedSettings) -> ServedApplication:
    """The graphs (imported and checked) and their roles, asked on the web desk."""
    roles = web_roles()
    return served_application(
        load_graphs(settings.graphs),
        answered_by=roles.answered_by,
        implement=roles.implement,
        policy=load_policy(settings.policy),
    )
