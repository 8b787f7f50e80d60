"""Signed requests from one workspace of an app installed by OAuth (``Team``): clicks, modal
submissions, events, thread replies and ``/pending``, each with that workspace's team id."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from bot import ExecutionStatus, WorkflowStartText
from bot.testing import call_tool
from tests.slack.checks import buttons
from tests.slack.conftest import interactive_body, signed_headers
from tests.slack.office import RefundCardTool, SlackOfficeWorkflow
from tests.slack.stub import Call
from tests.slack.test_oauth_install import Installed

_events = itertools.count(1)


@dataclass
class Team:
    """One workspace's requests to the installed bot."""

    installed: Installed
    team: str
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def post(self, body: str, content_type: str) -> int:
        headers = signed_headers(body) | {"Content-Type": content_type}
        response = await self.installed.http.post("/slack/events", data=body, headers=headers)
        await self.installed.bot.wait_idle()
        return response.status

    async def interaction(self, user: str, payload: dict[str, Any]) -> int:
        payload = {
            "team": {"id": self.team, "domain": "acme"},
            "user": {"id": user, "team_id": self.team},
            "api_app_id": "A0APP",
            "token": "legacy",
            "trigger_id": f"trigger-{next(self._ts)}",
            **payload,
        }
        return await self.post(interactive_body(payload), "application/x-www-form-urlencoded")

    async def click(
        self, user: str, action_id: str, value: str, *, home: bool = False, channel: str = ""
    ) -> int:
        container: dict[str, Any] = (
            {"type": "view", "view_id": "V0HOME"}
            if home
            else {"type": "message", "message_ts": "1.1", "channel_id": channel}
        )
        action = {"type": "button", "action_id": action_id, "block_id": "b1", "value": value}
        extra = {} if home else {"channel": {"id": channel}, "message": {"ts": "1.1"}}
        return await self.interaction(
            user,
            {
                "type": "block_actions",
                "container": container,
                "response_url": self.installed.stub.response_url(),
                "actions": [{**action, "action_ts": "1700000002.000000"}],
                **extra,
            },
        )

    async def submit(self, user: str, view: dict[str, Any], values: dict[str, Any]) -> int:
        submitted = {
            "id": "V0MODAL",
            "team_id": self.team,
            "type": "modal",
            "callback_id": view["callback_id"],
            "private_metadata": view.get("private_metadata", ""),
            "blocks": view.get("blocks", []),
            "state": {"values": values},
            "hash": "h",
        }
        return await self.interaction(user, {"type": "view_submission", "view": submitted})

    async def event(self, event: dict[str, Any]) -> int:
        envelope = {
            "token": "legacy",
            "team_id": self.team,
            "api_app_id": "A0APP",
            "type": "event_callback",
            "event_id": f"Ev{self.team}{next(_events):06d}",
            "event_time": 1700000000,
            "event": event,
        }
        return await self.post(json.dumps(envelope), "application/json")

    async def open_home(self, user: str) -> dict[str, Any]:
        """``app_home_opened``: the view published for ``user``."""
        before = len(self.installed.stub.of("views.publish"))
        assert await self.event({"type": "app_home_opened", "user": user, "tab": "home"}) == 200
        published = self.installed.stub.of("views.publish")[before:]
        assert [c.payload["user_id"] for c in published] == [user]
        return published[-1].view()

    async def reply(self, user: str, text: str, *, channel: str, thread_ts: str) -> int:
        return await self.event(
            {
                "type": "message",
                "user": user,
                "text": text,
                "channel": channel,
                "channel_type": "channel",
                "ts": f"1700000100.{next(self._ts):06d}",
                "thread_ts": thread_ts,
            }
        )

    async def pending(self, user: str) -> list[str]:
        """The pause ids ``/pending`` offers ``user``."""
        form = {
            "command": "/pending",
            "text": "",
            "user_id": user,
            "team_id": self.team,
            "channel_id": "C0GENERAL",
            "response_url": self.installed.stub.response_url(),
            "trigger_id": "1.2.3",
        }
        assert await self.post(urlencode(form), "application/x-www-form-urlencoded") == 200
        sent = self.installed.stub.of("response_url")[-1].payload
        return [str(b["value"]) for b in buttons(sent["blocks"]) if "approve" in b["action_id"]]

    async def ask_refund(self, owner: str = "U0OWN") -> tuple[str, Call]:
        """A refund asked for this workspace: its pause id and the question's post."""
        llm = self.installed.llm
        llm.then_return(call_tool(RefundCardTool, {"order_id": "7", "amount": 30.0}))
        result = await self.installed.app.execute(
            SlackOfficeWorkflow,
            WorkflowStartText(text="refund 7"),
            tenant_id=self.team,
            owner_id=owner,
        )
        assert result.status is ExecutionStatus.PAUSED
        posted = self.installed.stub.of("chat.postMessage")[-1]
        return str(buttons(posted.blocks())[0]["value"]), posted
