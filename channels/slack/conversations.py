"""Work started from Slack: a mention or a DM runs the entry workflow; its end is said in thread.

The execution's owner is the Slack user, its tenant the workspace, its thread the Slack thread
(``channels.slack.threads``). A run that rests paused posts nothing more here: its approval
messages are the posts. A run that ends (now, or after the answer that resumed it) posts its
answer, or why it failed, in the thread.
"""

from __future__ import annotations

import json
from typing import Any, Final

from bot.app import App
from bot.core.enums import ExecutionStatus
from bot.core.errors import CountersignError
from bot.core.results import ExecutionResult
from channels.slack.catalog import Catalog
from channels.slack.gateway import SlackGateway
from channels.slack.redaction import log
from channels.slack.render import escape
from channels.slack.threads import SlackThread

NO_WORKFLOW: Final = "Sorry, this bot has no workflow to run."
MAX_ANSWER: Final = 2900


class Conversations:
    def __init__(self, *, app: App, gateway: SlackGateway, catalog: Catalog) -> None:
        self._app = app
        self._gateway = gateway
        self._catalog = catalog

    async def start(self, *, thread: SlackThread, tenant_id: str, user: str, text: str) -> None:
        """Run the entry workflow with ``text``; say in the thread how it ended."""
        workflow = self._catalog.entry_workflow
        if workflow is None:
            await self._gateway.say_in_thread(thread.channel, thread.ts, NO_WORKFLOW)
            return
        try:
            result = await self._app.execute(
                workflow,
                {"text": text},
                tenant_id=tenant_id,
                owner_id=user,
                thread_id=thread.thread_id(),
            )
        except CountersignError as error:
            await self.report_failure(thread.thread_id(), error)
            return
        await self.report(result)

    async def report(self, result: ExecutionResult) -> None:
        """Say a finished execution's answer in its Slack thread (if it has one)."""
        thread = SlackThread.parse(result.thread_id)
        if thread is None or not result.moved:
            return  # another call ended it, and says so
        if result.status is ExecutionStatus.COMPLETED:
            await self._gateway.say_in_thread(thread.channel, thread.ts, _answer(result.output))
        elif result.status is ExecutionStatus.FAILED:
            await self._gateway.say_in_thread(
                thread.channel, thread.ts, ":warning: Sorry, this request failed."
            )

    async def report_failure(self, thread_id: str, error: CountersignError) -> None:
        thread = SlackThread.parse(thread_id)
        log.warning("slack: a run of thread %s failed: %s", thread_id, error.code)
        if thread is None:
            return
        text = f":warning: Sorry, this request failed: {escape(error.message, 2000)}"
        await self._gateway.say_in_thread(thread.channel, thread.ts, text)


def _answer(output: Any) -> str:
    if isinstance(output, dict) and isinstance(output.get("text"), str):
        text: str = output["text"]
    elif output is None:
        text = "Done."
    else:
        text = json.dumps(output, ensure_ascii=False, default=str)
    return escape(text, MAX_ANSWER) if text.strip() else "Done."
