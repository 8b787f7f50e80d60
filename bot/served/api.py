"""``serve_graph``: your LangGraph graph served in Slack (or on the web) from code, in one call.

```python
async with serve_graph(graph, slack=load_slack_settings(), approval_channel="C0APPROVALS",
                       approvers=["S0FINANCE"]) as served:
    await served.serve(port=3000)   # POST /slack/events, /healthz, /readyz, /metrics
```

The application is made for the graph (``bot.served.application``: a role per tool it asks
about, shown and checked by the tool's own arguments), or is yours: ``role=`` a
``@channel_role`` and ``channels=`` its implementation(s). Leaving the block closes the bot,
then the App.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Self

from aiohttp import web

from bot.app import App
from bot.components.decorators import application
from bot.core.clock import Clock
from bot.core.errors import SettingsError, SetupError
from bot.langgraph import LangGraphAgent
from bot.served.application import ServedApplication, served_application
from bot.served.channels import WEB_PERSON, slack_roles, web_roles
from bot.served.graphs import checked_graph, slug
from bot.served.web_desk import GraphDesk
from bot.settings import Settings
from channels.slack import SlackBot, SlackSettings
from channels.web import WebServer

SETTING = "serve_graph"


class ServedGraph:
    """A graph served: ``app`` (the ``App``), ``agent`` (the attached graph), ``bot`` (the
    ``SlackBot``, with Slack) and ``web`` (the ``WebServer``, with ``web_base_url``)."""

    def __init__(
        self,
        graph: Any,
        *,
        name: str,
        role: type | None,
        channels: Sequence[type],
        approvers: Sequence[str],
        approval_channel: str | None,
        slack: SlackSettings | None,
        web_base_url: str | None,
        database_url: str | None,
        settings: Settings | None,
        clock: Clock | None,
        suggested_prompts: Sequence[tuple[str, str]],
        policy: type | None = None,
    ) -> None:
        if slack is None and web_base_url is None:
            raise SetupError("serve_graph: give slack=SlackSettings(...) or web_base_url=...")
        if role is not None and not channels:
            raise SetupError("serve_graph: role= needs channels=[...], its implementation")
        self._graph = graph
        self._name = slug(name)
        self._role, self._channels = role, tuple(channels)
        self._approvers = tuple(approvers)
        self._approval_channel = approval_channel
        self._slack, self._web_base_url = slack, web_base_url
        self._database_url, self._settings, self._clock = database_url, settings, clock
        self._prompts = tuple(suggested_prompts)
        self._policy = policy
        self._stack = AsyncExitStack()
        self.app: App | None = None
        self.agent: LangGraphAgent | None = None
        self.bot: SlackBot | None = None
        self.web: WebServer | None = None
        self._desk: GraphDesk | None = None

    async def __aenter__(self) -> Self:
        try:
            await self._open()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._stack.aclose()

    async def _open(self) -> None:
        served = self._application()
        app = await App.create(
            served.application if served else self._yours(),
            database_url=self._database_url,
            clock=self._clock,
            settings=self._settings,
        )
        self._stack.push_async_callback(app.close)
        self.app = app
        if served is not None:
            [self.agent] = served.attach(app)
        else:
            assert self._role is not None
            graph = self._graph
            if graph.checkpointer is None:
                graph = graph.copy({"checkpointer": app.checkpointer})
            self.agent = app.langgraph(self._name, graph, role=self._role)
        if self._slack is not None:
            bot = SlackBot(app, self._slack, agents=[self.agent], suggested_prompts=self._prompts)
            self._stack.push_async_callback(bot.close)
            await bot.start()
            self.bot = bot
        if self._web_base_url is not None:
            self.web = WebServer(app, base_url=self._web_base_url)
            self._desk = GraphDesk(app, self.web, [self.agent])

    def _application(self) -> ServedApplication | None:
        if self._role is not None:
            return None
        try:
            loaded = checked_graph(self._graph, name=self._name, shown=self._name, setting=SETTING)
        except SettingsError as error:
            raise SetupError(error.message) from None
        if self._slack is not None:
            roles = slack_roles(self._approval_channel, self._approvers)
        else:
            roles = web_roles(self._approvers or (WEB_PERSON,))
        return served_application(
            [loaded], answered_by=roles.answered_by, implement=roles.implement, policy=self._policy
        )

    def _yours(self) -> type:
        app_class = type("ServedGraph", (), {"__module__": __name__})
        return application(name=f"{self._name}-served", channels=list(self._channels))(app_class)

    def web_app(self) -> web.Application:
        """Slack's routes (``/slack/events``, the probes) and, with ``web_base_url``, the web
        pages (the inbox, the questions, ``/`` to ask the graph), on one aiohttp app."""
        if self.bot is None:
            assert self._desk is not None
            return self._desk.web_app()
        application = self.bot.web_app()
        if self.web is not None and self._desk is not None:
            self.web.add_routes(application)
            self._desk.add_routes(application)
        return application

    async def serve(self, *, host: str = "0.0.0.0", port: int = 3000) -> None:
        """Serve ``web_app()`` on ``host:port`` until cancelled (Ctrl-C in ``asyncio.run``)."""
        runner = web.AppRunner(self.web_app(), access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, host, port).start()
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()


def serve_graph(
    graph: Any,
    *,
    name: str = "agent",
    role: type | None = None,
    channels: Sequence[type] = (),
    approvers: Sequence[str] = (),
    approval_channel: str | None = None,
    slack: SlackSettings | None = None,
    web_base_url: str | None = None,
    database_url: str | None = None,
    settings: Settings | None = None,
    clock: Clock | None = None,
    suggested_prompts: Sequence[tuple[str, str]] = (),
    policy: type | None = None,
) -> ServedGraph:
    """Serve a compiled LangGraph ``graph`` (``async with serve_graph(...) as served``).

    Its questions are asked under ``role`` (yours, implemented by ``channels``), else under
    roles made for its tools: in Slack (``slack``) by ``approvers`` (Slack user or user-group
    ids) in ``approval_channel``, or, without approvers, by whoever asked, in their thread;
    on the web (``web_base_url``, no Slack) by ``approvers`` (default ``"you"``). A mention, a
    DM or an assistant thread runs it (``suggested_prompts``: the pane's ``(title,
    message)`` pairs). The graph keeps its checkpointer, or gets the App's. A graph that asks
    nothing Countersign can put to a person is a ``SetupError`` saying what is supported.
    ``policy`` (a ``@policy`` class) decides before each question of the roles made for the
    graph is sent (with ``role=``, name it on your role: ``@channel_role(..., policy=)``)."""
    return ServedGraph(
        graph,
        name=name,
        role=role,
        channels=channels,
        approvers=approvers,
        approval_channel=approval_channel,
        slack=slack,
        web_base_url=web_base_url,
        database_url=database_url,
        settings=settings,
        clock=clock,
        suggested_prompts=suggested_prompts,
        policy=policy,
    )
