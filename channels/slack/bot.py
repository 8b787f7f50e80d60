"""``SlackBot``: the Bolt app on top of a Countersign ``App``, served over HTTP or Socket Mode.

```python
app = await App.create(OfficeApplication, database_url=...)
async with SlackBot(app, load_slack_settings()) as bot:
    runner = web.AppRunner(bot.web_app())        # or: await bot.start() for Socket Mode
```

Build it inside a running event loop. It provides the ``SlackGateway`` to the App (so the Slack
channels can post), registers the listeners, and on ``close`` waits for the work it started
after an ack (bounded by ``shutdown_grace``) before cancelling the rest. The App is the
caller's: close it after the bot.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from types import TracebackType
from typing import Any, Final, Self

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.adapter.socket_mode.async_internals import send_async_response
from slack_bolt.adapter.socket_mode.internals import build_headers
from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.token_rotation.async_rotator import AsyncTokenRotator
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.app import App
from bot.core.errors import CountersignError, SetupError
from bot.core.results import ExecutionPauseEvent, ExecutionResumeEvent
from bot.langgraph import LangGraphAgent
from bot.runtime.probes import ReadyCheck
from bot.store.workspace_settings import SqlWorkspaceSettings
from channels.slack import listeners, readiness, redaction
from channels.slack.ack_runner import AckedAtOnce
from channels.slack.agent_sessions import AgentSessions
from channels.slack.answering import Answering
from channels.slack.approvers import ApproverDirectory
from channels.slack.authorization import Authorizer
from channels.slack.batch_flows import BatchFlows
from channels.slack.batch_seal import BatchSealer
from channels.slack.bolt_authorization import TokenAuthorization, use_token_authorization
from channels.slack.catalog import Catalog
from channels.slack.conversations import Conversations
from channels.slack.counted_calls import CountBoltCalls
from channels.slack.database import SlackDatabase
from channels.slack.delegations import SlackDelegations
from channels.slack.edge import RequestSignatures
from channels.slack.feedback import Feedback
from channels.slack.flows import Flows
from channels.slack.gateway import ClosedQuestion, SlackGateway
from channels.slack.grant_flows import GrantFlows
from channels.slack.grant_list import SlackGrants
from channels.slack.handing import SlackHanding
from channels.slack.home import Answerable, HomeTabs
from channels.slack.home_settings import HomeSettings
from channels.slack.installations import DatabaseInstallationStore
from channels.slack.late_answers import LateAnswers
from channels.slack.listeners import assistant
from channels.slack.middlewares import (
    DropEventRetries,
    InOrder,
    RefuseMalformed,
    ReparseSlashCommand,
    ResolveTenant,
    handled_event,
)
from channels.slack.notes import RequesterNotes
from channels.slack.oauth import add_install_routes, oauth_settings, register_revocations
from channels.slack.observing import Dispatch, edge_counter, observed_dispatch
from channels.slack.outbox import SlackOutbox
from channels.slack.pending import PendingLists
from channels.slack.services import SlackServices
from channels.slack.settings import SlackSettings
from channels.slack.signature_log import RefusedSignatures
from channels.slack.signing import MetadataSigner
from channels.slack.store import SeenEvents, SlackMessageStore
from channels.slack.tasks import AckFirst, BackgroundTasks
from channels.slack.tenant_tokens import (
    InstallationTenant,
    TenantTokenClient,
    TenantTokens,
    dispatched_for_tenant,
    speaking_for,
)
from channels.slack.threads import SlackThread
from channels.slack.turn_answers import TurnAnswers
from channels.slack.web import EVENTS_PATH, build_web_app
from channels.slack.webapi import TRANSPORT_ERRORS, failure_of, slack_session, web_client
from channels.slack.workspace_admins import WorkspaceAdmins
from channels.slack.workspaces import WorkspaceConfigs

SEEN_EVENTS_KEPT: Final = timedelta(hours=1)
"""Slack retries an event within minutes; ids older than this are pruned."""
PRUNE_INTERVAL: Final = timedelta(minutes=10)
BOLT_APP_LOGGER: Final = f"{redaction.bolt_log.name}.app"
"""Bolt's app name, which it names a logger after and sets to its base logger's level on each
request: under Bolt's own logger, never ``countersign`` itself (every logger of ours would
then be held to Bolt's level, the answers' lines at INFO dropped)."""


class _State(enum.Enum):
    NEW = "new"
    STARTED = "started"
    CLOSED = "closed"


class SlackBot:
    """The Slack bot of one App. ``.bolt`` is the Bolt app, ``.web_app()`` its HTTP server.

    A mention or a DM starts work: the application's entry workflow, or ``agent`` (a graph
    attached with ``App.langgraph``) invoked with the message on the Slack thread's id; with
    several (``agents=[...]``), the one whose name starts the message (``refunds: ...``),
    else the first.
    """

    def __init__(
        self,
        app: App,
        settings: SlackSettings,
        *,
        client: AsyncWebClient | None = None,
        agent: LangGraphAgent | None = None,
        agents: Sequence[LangGraphAgent] = (),
        suggested_prompts: Sequence[tuple[str, str]] = (),
        check_slack_when_ready: bool = False,
    ) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise SetupError("create SlackBot inside a running event loop") from None
        redaction.install()
        redaction.settle_bolt_level()
        self._app = app
        self._settings = settings
        self._agents = tuple(dict.fromkeys([*([agent] if agent else []), *agents]))
        self._prompts = tuple(suggested_prompts)
        self._state = _State.NEW
        self._session = slack_session(settings)
        self.client = client or web_client(
            settings,
            self._session,
            metrics=app.metrics,
            kind=TenantTokenClient if settings.oauth else None,  # tenants are installations
        )
        slack_check = readiness.SlackAuthCheck(self.client, app.clock, oauth=settings.oauth)
        self.ready_checks: tuple[ReadyCheck, ...] = (
            ((readiness.NAME, slack_check),) if check_slack_when_ready else ()
        )
        """What ``/readyz`` checks beside the App (``COUNTERSIGN_READYZ_SLACK``: the token)."""
        self.tasks = BackgroundTasks()
        self._database = SlackDatabase.open(app.database, app.clock)
        self.messages = SlackMessageStore(app.message_refs)
        self.seen_events = SeenEvents(self._database)
        catalog = Catalog(app)
        self._catalog = catalog
        self.sessions = AgentSessions(client=self.client, clock=app.clock, tasks=self.tasks)
        directory = ApproverDirectory(self.client, app.clock)
        self.notes = RequesterNotes(self._database)
        self.outbox = SlackOutbox(app=app, client=self.client, store=app.outbox, notes=self.notes)
        self.gateway = SlackGateway(
            app=app,
            client=self.client,
            messages=self.messages,
            notes=self.notes,
            catalog=catalog,
            outbox=self.outbox,
        )
        if settings.oauth:  # each workspace's admin may set where it asks, who answers
            self.gateway.workspaces = WorkspaceConfigs(catalog, SqlWorkspaceSettings(app.database))
        app.provide(SlackGateway, self.gateway)
        self.services = self._services(catalog, directory)
        with _without_bolts_token_warning():
            self.bolt = AsyncApp(
                client=self.client,
                signing_secret=settings.signing_secret.get_secret_value(),
                process_before_response=False,
                logger=redaction.bolt_log,
                name=BOLT_APP_LOGGER,
                before_authorize=InOrder(
                    ReparseSlashCommand(), RefuseMalformed(), CountBoltCalls(app.metrics)
                ),
                # installed by OAuth: Bolt's flow and authorize on our stores
                oauth_settings=oauth_settings(app, settings, self.client)
                if settings.oauth
                else None,
            )
        AckedAtOnce.replacing(self.bolt)  # a request answered at its ack, not up to 10 ms later
        self.authorization = TokenAuthorization(self.client)
        if not settings.oauth:  # one workspace: its token, surviving a Slack outage
            use_token_authorization(self.bolt, self.authorization)
        if settings.oauth:
            self._use_installation_tokens(settings)
        else:
            self.bolt.use(ResolveTenant(settings.tenant))
        self.bolt.use(DropEventRetries(self.seen_events, app.clock))
        listeners.register(self.bolt, self.services)
        assistant.register(self.bolt, self.services, self.sessions, self._prompts)
        dispatch: Dispatch = self.bolt.async_dispatch
        if settings.oauth:  # the listeners' Web API calls: with the workspace's own token
            dispatch = dispatched_for_tenant(dispatch)
        self._dispatch = observed_dispatch(dispatch, app.metrics, app.clock)
        app.on_execution_pause(self._on_pause)
        app.on_execution_resume(self._on_resume)
        self.gateway.on_change(self._on_message_closed)
        self._prune_timer = app.clock.call_every(PRUNE_INTERVAL, self._prune)
        self._catch_up_timer = app.clock.call_every(app.sweep_interval, self._catch_up)
        self._socket: AsyncSocketModeHandler | None = None
        self._web_app: web.Application | None = None

    def _use_installation_tokens(self, settings: SlackSettings) -> None:
        """Installed by OAuth: a request's tenant is its workspace, and the bot's calls are
        made with the token of the workspace they are for (``channels.slack.tenant_tokens``)."""
        store = self.bolt.installation_store
        if isinstance(self.client, TenantTokenClient) and isinstance(
            store, DatabaseInstallationStore
        ):
            secret = settings.client_secret
            assert settings.client_id is not None and secret is not None  # settings.oauth
            rotator = AsyncTokenRotator(
                client_id=settings.client_id,
                client_secret=secret.get_secret_value(),
                client=self.client,
            )
            self.client.tokens = TenantTokens(store, rotator)
            register_revocations(self.bolt, store, self.tasks)  # before the other listeners
        self.bolt.use(InstallationTenant())

    def _services(self, catalog: Catalog, directory: ApproverDirectory) -> SlackServices:
        app, client, session = self._app, self.client, self._session
        feedback = Feedback(client, session)
        conversations = Conversations(
            app=app,
            gateway=self.gateway,
            catalog=catalog,
            agents=self._agents,
            sessions=self.sessions,
        )
        workspaces = self.gateway.workspaces
        authorizer = Authorizer(workspaces, directory)
        answering = Answering(
            app=app,
            gateway=self.gateway,
            authorizer=authorizer,
            feedback=feedback,
            gate=self.tasks.gate,
        )
        lists = PendingLists(app=app, catalog=catalog, directory=directory, workspaces=workspaces)
        settings = self._home_settings(catalog, workspaces)
        grants = SlackGrants(app=app, catalog=catalog, directory=directory)
        sealer = BatchSealer(app.derived_keys)
        delegations = SlackDelegations(
            app=app,
            client=client,
            outbox=self.gateway.outbox,
            directory=directory,
            workspaces=workspaces,
        )
        home = HomeTabs(
            client=client,
            lists=lists,
            catalog=catalog,
            directory=directory,
            tasks=self.tasks,
            workspaces=workspaces,
            sections=(delegations,) if settings is None else (delegations, settings),
            grants=grants,
            sealer=sealer,
            lines=app.batch_lines,
            clock=app.clock,
        )
        delegations.refresh_homes(home)
        signer = MetadataSigner(self._settings.signing_secret.get_secret_value())
        flows = Flows(
            app=app,
            client=client,
            gateway=self.gateway,
            messages=self.messages,
            answering=answering,
            conversations=conversations,
            feedback=feedback,
            lists=lists,
            home=home,
            signer=signer,
            session=session,
        )
        batches = BatchFlows(
            client=client,
            gateway=self.gateway,
            answering=answering,
            feedback=feedback,
            home=home,
            signer=signer,
            sealer=sealer,
            refresh_list=flows.refresh_list,
        )
        grant_flows = GrantFlows(
            app=app,
            client=client,
            gateway=self.gateway,
            answering=answering,
            authorizer=authorizer,
            feedback=feedback,
            grants=grants,
            home=home,
            signer=signer,
        )
        return SlackServices(
            app=app,
            answering=answering,
            conversations=conversations,
            flows=flows,
            batches=batches,
            grants=grant_flows,
            home=home,
            messages=self.messages,
            tasks=self.tasks,
            late=LateAnswers(app.clock, feedback),
            turns=TurnAnswers(
                app=app,
                gateway=self.gateway,
                answering=answering,
                feedback=feedback,
                batches=batches,
            ),
            settings=settings,
            handing=SlackHanding(
                app=app, gateway=self.gateway, answering=answering, feedback=feedback
            ),
            delegations=delegations,
            feedback=feedback,
        )

    def _home_settings(self, catalog: Catalog, workspaces: WorkspaceConfigs) -> HomeSettings | None:
        """Installed by OAuth: the Home's per-workspace settings, changed by an admin."""
        client_id = self._settings.client_id
        if workspaces.settings is None or client_id is None:
            return None
        installations = DatabaseInstallationStore(client_id, self._app.installations)
        return HomeSettings(
            client=self.client,
            clock=self._app.clock,
            catalog=catalog,
            workspaces=workspaces,
            admins=WorkspaceAdmins(self.client, installations),
        )

    # ---------------------------------------------------------------- serving

    def web_app(self) -> web.Application:
        """The aiohttp application: ``POST /slack/events``, ``GET /healthz``, ``/readyz`` (with
        ``ready_checks``) and ``/metrics``; installed by OAuth, ``GET /slack/install`` and
        ``GET /slack/oauth_redirect`` too."""
        if self._web_app is None:
            self._web_app = build_web_app(
                self.bolt,
                signatures=RequestSignatures(self._settings.signing_secret.get_secret_value()),
                max_body_bytes=self._settings.max_body_bytes,
                is_open=lambda: self._state is not _State.CLOSED,
                gate=self.tasks.gate,
                on_refused=RefusedSignatures(self._app.clock).refused,
                on_handled=self._event_handled,
                observed=self._app,
                dispatch=self._dispatch,
                ready_checks=self.ready_checks,
                middlewares=(edge_counter(self._app.metrics, self._app.clock, path=EVENTS_PATH),),
            )
            if self.bolt.oauth_flow is not None:
                add_install_routes(self._web_app, self.bolt.oauth_flow)
        return self._web_app

    def install_app(self) -> web.Application:
        """Over Socket Mode, installed by OAuth: an aiohttp application of ``GET /slack/install``
        and ``GET /slack/oauth_redirect`` alone (the events come over the socket; a browser
        still needs a page to install from and Slack a URL to send it back to)."""
        if self.bolt.oauth_flow is None:
            raise SetupError("install_app: these Slack settings are not for an install by OAuth")
        application = web.Application()
        add_install_routes(application, self.bolt.oauth_flow)
        return application

    async def start(self) -> None:
        """Connect over Socket Mode when an app token is set (HTTP needs nothing more)."""
        if self._state is _State.CLOSED:
            raise SetupError("this SlackBot was closed; create a new one")
        if self._state is _State.STARTED:
            return
        self._state = _State.STARTED
        token = self._settings.app_token
        if token is not None:
            self._socket = _GatedSocketModeHandler(
                self.tasks.gate,
                self._event_handled,
                self._dispatch,
                self.bolt,
                app_token=token.get_secret_value(),
                web_client=self.client,
                logger=redaction.bolt_log,
            )
            await self._socket.connect_async()  # type: ignore[no-untyped-call]  # Bolt leaves it untyped

    async def wait_idle(self) -> None:
        """Wait until the work started after acks is done (tests, benchmarks)."""
        await self.tasks.wait_idle()

    async def close(self) -> None:
        """Stop taking work, finish (or cancel) what runs, release the connections; repeatable."""
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        self._prune_timer.cancel()
        self._catch_up_timer.cancel()
        if self._socket is not None:
            await self._socket.close_async()  # type: ignore[no-untyped-call]
        await self.tasks.close(self._settings.shutdown_grace)
        await self._session.close()
        await self._database.close()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ---------------------------------------------------------------- runtime events

    def _on_pause(self, event: ExecutionPauseEvent) -> None:
        if self.tasks.closed:
            return
        thread = SlackThread.parse(event.thread_id)
        if thread is not None and self.sessions.holds(event.thread_id):
            self.sessions.waiting(thread, self._approvers(event))
        with speaking_for(event.tenant_id):  # the refresh's task: the tenant's own token
            self.services.home.refresh(
                event.tenant_id,
                [
                    Answerable(
                        answered_by=p.answered_by,
                        role=p.channel,
                        owner_id=p.owner_id or "",
                        approvers=() if p.route is None else p.route.approvers,
                    )
                    for p in event.pending
                ],
            )

    def _approvers(self, event: ExecutionPauseEvent) -> tuple[str, ...]:
        """Who the thread's waiting questions wait for (none: its requester)."""
        found: list[str] = []
        for pending in event.pending:
            implementation = self._catalog.slack_channel_of_role(pending.channel)
            if implementation is not None:  # as its workspace set it (read as it was asked)
                config = self.gateway.workspaces.last_known(event.tenant_id, implementation)
                found += config.approvers
        return tuple(dict.fromkeys(found))

    async def _on_resume(self, event: ExecutionResumeEvent) -> None:
        """A tree moved (a click here, an API call, a sweep after a crash): update the messages
        of the answers it took and say the run's end in its thread, from the event alone.

        Awaited, not spawned: the App records a run's end as told once this returns (a process
        that dies first leaves the end to the sweep, which tells it again)."""
        if self.tasks.closed or (not event.answered and event.result is None):
            return
        with speaking_for(event.tenant_id):  # installed by OAuth: the tenant's own token
            await self._tell_resumed(event)

    async def _tell_resumed(self, event: ExecutionResumeEvent) -> None:
        """The messages first (one Slack failed is owed: ``SlackGateway.catch_up``), then the
        run's end, which raises when Slack cannot take it now (the App tells it again).

        When the run's end is said in no thread, the last message's close is the last write of
        this telling: it records the end told too (``event.end_told``), one write less."""
        end_told = None if _end_said_in_a_thread(event) else event.end_told
        for index, pause in enumerate(event.answered):
            last = index == len(event.answered) - 1
            try:
                await self.gateway.show_outcome(pause, end_told=end_told if last else None)
            except (SlackApiError, *TRANSPORT_ERRORS) as error:
                redaction.log.warning("slack: a message update failed: %s", failure_of(error))
        conversations = self.services.conversations
        if isinstance(event.error, CountersignError):
            await conversations.report_failure(
                event.thread_id, event.error, run_id=event.execution_id, retried=event.by_sweep
            )
        elif event.result is not None:
            await conversations.report(event.result, outbox=True, retried=event.by_sweep)

    def _on_message_closed(self, closed: ClosedQuestion) -> None:
        if self.tasks.closed:
            return
        answerable = Answerable(
            answered_by=closed.answered_by, role=closed.role, owner_id=closed.owner_id
        )
        with speaking_for(closed.tenant_id):
            self.services.home.refresh(closed.tenant_id, [answerable])

    async def _event_handled(self, event_id: str) -> None:
        await self.seen_events.handled(event_id, self._app.clock.now())

    async def _catch_up(self) -> None:
        if self.tasks.closed:
            return
        try:
            await self.gateway.catch_up()
        except Exception as error:  # the timer must live on (the database may be away)
            redaction.log.warning("slack: catching up messages failed: %s", type(error).__name__)

    async def _prune(self) -> None:
        try:
            await self.seen_events.prune(self._app.clock.now() - SEEN_EVENTS_KEPT)
        except SQLAlchemyError as error:  # the timer must live on: the next tick prunes
            redaction.log.warning("slack: pruning seen events failed: %s", type(error).__name__)


def _end_said_in_a_thread(event: ExecutionResumeEvent) -> bool:
    """Whether the run's end may be said in a Slack thread once its messages are updated
    (``Conversations.report``): a run started in one."""
    threads = [event.thread_id] + ([] if event.result is None else [event.result.thread_id])
    return any(SlackThread.parse(thread) is not None for thread in threads)


@contextmanager
def _without_bolts_token_warning() -> Iterator[None]:
    """Bolt reads ``SLACK_BOT_TOKEN`` from the environment although it is given a client, and
    then warns on every start that the token will be unused: our client carries that very
    token, so that one warning (and only it) is left out while Bolt is made."""
    unused = warning_client_prioritized_and_token_skipped()

    def not_it(record: logging.LogRecord) -> bool:
        return record.getMessage() != unused

    redaction.bolt_log.addFilter(not_it)
    try:
        yield
    finally:
        redaction.bolt_log.removeFilter(not_it)


class _GatedSocketModeHandler(AsyncSocketModeHandler):
    """Socket Mode envelopes count as requests being acked, like HTTP ones; an event is marked
    handled once its dispatch (listener middleware and ack) is over, as over HTTP."""

    def __init__(
        self,
        gate: AckFirst,
        handled: Callable[[str], Awaitable[None]],
        dispatch: Dispatch,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._gate = gate
        self._handled = handled
        self._dispatch = dispatch

    async def handle(self, client: AsyncBaseSocketModeClient, req: SocketModeRequest) -> None:
        # what Bolt's own handle does (run_async_bolt_app, send_async_response), keeping the
        # request to learn which event it claimed
        with self._gate.acking():
            request = AsyncBoltRequest(
                mode="socket_mode", body=req.payload, headers=build_headers(req)
            )
            response = await self._dispatch(request)
            await send_async_response(client, req, response, time.time())
        event_id = handled_event(request)
        if event_id is not None and response.status == 200:
            await self._handled(event_id)
