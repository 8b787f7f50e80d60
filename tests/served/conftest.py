"""The Slack Web API stub, as the Slack tests have it."""

from __future__ import annotations

from tests.slack.conftest import stub

__all__ = ["stub"]
