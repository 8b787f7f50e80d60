"""Work started from Slack: a mention or a DM runs the entry workflow (or an attached graph the
bot was given, ``SlackBot(..., agent=)`` / ``agents=[...]``: the one whose name starts the
message, ``refunds: ...``, else the first); its end is said in the thread.

The execution's owner is the Slack user, its tenant the workspace, its thread the Slack thread
(``channels.slack.threads``; an attached graph's own thread too, so a later mention in the same
Slack thread continues its conversation). A run that rests paused posts nothing more here: its
approval messages are the posts. A run that ends (now, or after the answer that resumed it)
posts its answer, or why it failed, in the thread: a workflow's ``text``, an attached agent's
last message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from bot.app import App
from bot.core.enums import ExecutionStatus
from bot.core.errors import CountersignError, RunInterruptedError
from bot.core.results import ExecutionResult
from bot.langgraph import LangGraphAgent
from bot.runtime.graph_output import answer_of
from channels.slack.agent_sessions import AgentSessions
from channels.slack.catalog import Catalog
from channels.slack.gateway import SlackGateway
from channels.slack.redaction import log
from channels.slack.render import escape
from channels.slack.threads import SlackThread

NO_WORKFLOW: Final = "Sorry, this bot has no workflow to run."
MAX_ANSWER: Final = 2900


class Conversations:
    def __init__(
        self,
        *,
        app: App,
        gateway: SlackGateway,
        catalog: Catalog,
        agent: LangGraphAgent | None = None,
        agents: Sequence[LangGraphAgent] = (),
        sessions: AgentSessions | None = None,
    ) -> None:
        self._app = app
        self._gateway = gateway
        self._catalog = catalog
        self._sessions = sessions
        self._owners: dict[str, str] = {}  # an assistant thread's requester, by thread id
        self._agents = tuple(dict.fromkeys([*([agent] if agent else []), *agents]))

    async def start(self, *, thread: SlackThread, tenant_id: str, user: str, text: str) -> None:
        """Run the entry workflow (or an attached agent) with ``text``; say in the thread how
        it ended."""
        workflow = self._catalog.entry_workflow
        if workflow is None and not self._agents:
            await self._gateway.say_in_thread(thread.channel, thread.ts, NO_WORKFLOW)
            return
        self._owners[thread.thread_id()] = user
        try:
            if self._agents:
                agent, text = addressed(self._agents, text)
                result = await agent.ainvoke(
                    {"messages": [{"role": "user", "content": text}]},
                    thread_id=thread.thread_id(),
                    tenant_id=tenant_id,
                    owner_id=user,
                )
            else:
                assert workflow is not None
                result = await self._app.execute(
                    workflow,
                    {"text": text},
                    tenant_id=tenant_id,
                    owner_id=user,
                    thread_id=thread.thread_id(),
                )
        except RunInterruptedError as error:  # not failed: recovery asks again and goes on
            log.warning(
                "slack: a run of thread %s waits for recovery: %s", thread.thread_id(), error.code
            )
            return
        except CountersignError as error:
            await self.report_failure(thread.thread_id(), error)
            return
        await self.report(result)

    async def report(
        self, result: ExecutionResult, *, outbox: bool = False, retried: bool = False
    ) -> None:
        """Say a finished execution's answer in its Slack thread (if it has one).

        ``outbox``: told from the App's resume event, whose end stays untold (and is told again
        by its sweep, ``retried``) when Slack cannot take it now."""
        thread = SlackThread.parse(result.thread_id)
        if thread is None or not result.moved:
            return  # another call ended it, and says so
        if result.status is ExecutionStatus.COMPLETED:
            said = _answer(result.output)
            sessions, owner = self._sessions, self._owners.pop(result.thread_id, None)
            if sessions is not None and owner is not None and sessions.holds(result.thread_id):
                await sessions.answer(thread, said, user=owner)  # the assistant pane's stream
                return
        elif result.status is ExecutionStatus.FAILED:
            said = ":warning: Sorry, this request failed."
        else:
            return
        await self._say_end(thread, said, result.execution_id, outbox=outbox, retried=retried)

    async def report_failure(
        self,
        thread_id: str,
        error: CountersignError,
        *,
        run_id: str | None = None,
        retried: bool = False,
    ) -> None:
        """Say a run's failure in its thread; with ``run_id``, through the App's outbox (as
        ``report(..., outbox=True)``)."""
        thread = SlackThread.parse(thread_id)
        log.warning("slack: a run of thread %s failed: %s", thread_id, error.code)
        if thread is None:
            return
        text = f":warning: Sorry, this request failed: {escape(error.message, 2000)}"
        if run_id is None:
            await self._gateway.say_in_thread(thread.channel, thread.ts, text)
            return
        await self._say_end(thread, text, run_id, outbox=True, retried=retried)

    async def _say_end(
        self, thread: SlackThread, text: str, run_id: str, *, outbox: bool, retried: bool
    ) -> None:
        if not outbox:
            await self._gateway.say_in_thread(thread.channel, thread.ts, text)
            return
        await self._gateway.tell_run_end(
            thread.channel, thread.ts, text, run_id=run_id, retried=retried
        )


def addressed(agents: Sequence[LangGraphAgent], text: str) -> tuple[LangGraphAgent, str]:
    """The agent a message is for: the one whose name starts it (``refunds: refund order
    7``), else the first; and the message without that name."""
    name, colon, rest = text.partition(":")
    for agent in agents:
        if colon and rest.strip() and name.strip().lower() == agent.name.lower():
            return agent, rest.strip()
    return agents[0], text


def _answer(output: Any) -> str:
    text = answer_of(output)
    return escape(text, MAX_ANSWER) if text.strip() else "Done."
