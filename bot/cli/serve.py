"""``python -m bot serve`` with the Slack settings present: serve the application in Slack.

HTTP on ``PORT`` (``POST /slack/events``, ``GET /healthz``, ``/readyz``, ``/metrics``), or
Socket Mode when ``SLACK_APP_TOKEN`` is set (``COUNTERSIGN_METRICS_PORT``: the probes on a port
of their own; installed by OAuth, ``GET /slack/install`` and ``/slack/oauth_redirect`` still on
``PORT``), both on ``COUNTERSIGN_BIND_ADDRESS`` (default every interface), until SIGINT or
SIGTERM; then the bot finishes its background work
(bounded) and the App closes. The application is ``COUNTERSIGN_GRAPH``'s graphs (``module:attr``,
``bot.served``: a mention, a DM or an assistant thread runs one), or ``COUNTERSIGN_APP``
(``module:Class``), else the built-in Slack office desk (``bot.desk.slack``). A missing or
malformed setting, a bot token Slack refuses (one ``auth.test`` at start) and a database that
cannot be opened are one line on standard error and exit code 2.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TextIO

from aiohttp import web

from bot.app import App
from bot.cli.binding import EVERY_INTERFACE, Binding
from bot.cli.heap import limit_malloc_arenas
from bot.cli.logs import logging_as
from bot.cli.traces import run_traced
from bot.components.specs import ApplicationSpec, spec_of
from bot.core.errors import AssemblyError, SettingsError
from bot.desk.offline_model import OfflineDemoModel
from bot.desk.settings import (
    OFFLINE_MODEL,
    DeskSettings,
    check_desk_model,
    load_desk_settings,
    load_served_settings,
)
from bot.desk.slack import build_desk
from bot.langgraph import LangGraphAgent
from bot.models.provider import resolve_chat_model
from bot.runtime.probes import METRICS_PATH, probe_app
from bot.security.key_source import key_source
from bot.served.application import ServedApplication
from bot.served.serve import slack_application
from bot.served.targets import GRAPH_SETTING, SuggestedPrompt
from bot.settings import Settings, load_settings
from bot.store.database import database_failure
from channels.slack.bot import SlackBot
from channels.slack.oauth import INSTALL_PATH
from channels.slack.settings import SlackSettings, load_slack_settings
from channels.slack.token_check import check_bot_token
from channels.slack.web import EVENTS_PATH

EXIT_OK: Final = 0
EXIT_SETTINGS: Final = 2
HOST: Final = EVERY_INTERFACE  # without COUNTERSIGN_BIND_ADDRESS: Slack must reach /slack/events


def serve_slack(environ: Mapping[str, str] | None = None, env_file: Path = Path(".env")) -> int:
    """Serve until a signal; the exit code. Spans are exported as the ``OTEL_*`` settings say
    (``bot.cli.traces``), what is left of them on the way out."""
    limit_malloc_arenas()  # before any worker thread: RSS stays flat (bot.cli.heap)
    return run_traced(environ, lambda: _serve(environ, str(env_file), sys.stdout, sys.stderr))


async def _serve(environ: Mapping[str, str] | None, env_file: str, out: TextIO, err: TextIO) -> int:
    try:
        slack = load_slack_settings(environ, env_file=env_file)
        settings = load_settings(environ, env_file=env_file)
    except SettingsError as error:
        print(error.message, file=err)
        return EXIT_SETTINGS
    with logging_as(settings):
        return await _serve_with(slack, settings, environ, env_file, out, err)


async def _serve_with(
    slack: SlackSettings,
    settings: Settings,
    environ: Mapping[str, str] | None,
    env_file: str,
    out: TextIO,
    err: TextIO,
) -> int:
    desk: DeskSettings | None = None
    graphs: ServedApplication | None = None
    try:
        key_source(settings.database_url, settings.countersign_encryption_keys)  # at once
        served = load_served_settings(environ, env_file=env_file, slack=True)
        if served is not None:
            graphs = slack_application(served)  # your graphs: imported and checked
            application = graphs.application
        else:
            application, desk = load_application(settings, environ, env_file)
        await check_bot_token(slack)
        app = await _create_app(application, settings)
    except (SettingsError, AssemblyError) as error:
        print(error.message, file=err)
        return EXIT_SETTINGS
    try:
        agents: tuple[LangGraphAgent, ...] = ()
        try:
            if graphs is not None:
                agents = graphs.attach(app)
        except AssemblyError as error:
            print(f"{GRAPH_SETTING}: {error.message}", file=err)
            return EXIT_SETTINGS
        if desk is not None and desk.agent == "langgraph":
            agents = (_attach_desk_agent(app, desk, settings),)
        prompts = served.prompts if served is not None else ()
        return await _run(app, slack, settings, out, err, agents=agents, prompts=prompts)
    finally:
        await app.close()


def _attach_desk_agent(app: App, desk: DeskSettings, settings: Settings) -> LangGraphAgent:
    """``COUNTERSIGN_DESK_AGENT=langgraph``: the desk's LangChain agent, on the desk's model."""
    from bot.desk.langgraph_desk import attach_to_desk  # LangChain: only for this desk

    model = (
        OfflineDemoModel()
        if desk.model == OFFLINE_MODEL
        else resolve_chat_model(desk.model, settings.model_providers())
    )
    return attach_to_desk(app, model)


async def _create_app(application: type, settings: Settings) -> App:
    """The App; a database that cannot be opened is a ``SettingsError`` naming DATABASE_URL."""
    try:
        return await App.create(application, settings=settings)
    except Exception as error:
        reason = database_failure(error)
        if reason is None:
            raise
        raise SettingsError(f"DATABASE_URL: the database could not be opened: {reason}") from None


async def _run(
    app: App,
    slack: SlackSettings,
    settings: Settings,
    out: TextIO,
    err: TextIO,
    *,
    agents: tuple[LangGraphAgent, ...] = (),
    prompts: tuple[SuggestedPrompt, ...] = (),
) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    bot = SlackBot(
        app,
        slack,
        agents=agents,
        suggested_prompts=[(p.title, p.message) for p in prompts],
        check_slack_when_ready=settings.countersign_readyz_slack,
    )
    runner: web.AppRunner | None = None
    probes: web.AppRunner | None = None
    try:
        await bot.start()
        address = settings.countersign_bind_address
        port = settings.countersign_metrics_port
        if port is not None:
            probe = probe_app(app, is_open=lambda: not stop.is_set(), checks=bot.ready_checks)
            probes = web.AppRunner(probe)
            await probes.setup()
            metrics = Binding.of(address, port, default=HOST, setting="COUNTERSIGN_METRICS_PORT")
            problem = await metrics.serve(probes)
            if problem is not None:
                print(problem, file=err)
                return EXIT_SETTINGS
            print(f"Metrics on {metrics.shown}{METRICS_PATH}", file=out, flush=True)
        if slack.socket_mode:
            print("Countersign is connected to Slack over Socket Mode.", file=out, flush=True)
        if not slack.socket_mode or slack.oauth:  # over Socket Mode: the install's pages alone
            socket = slack.socket_mode
            runner = web.AppRunner(bot.install_app() if socket else bot.web_app(), access_log=None)
            await runner.setup()
            events = Binding.of(address, slack.port, default=HOST)
            problem = await events.serve(runner)
            if problem is not None:
                print(problem, file=err)
                return EXIT_SETTINGS
            served = (
                f"Install it at {events.shown}{INSTALL_PATH}"
                if socket
                else f"Countersign serves Slack on {events.shown}{EVENTS_PATH}"
            )
            print(served, file=out, flush=True)
        # what was built to start (the App, its graphs, Bolt) lives as long as the process:
        # out of the collector's generations, full collections stay short and acks fast
        gc.freeze()
        await stop.wait()
        print("Stopping: finishing the work in progress.", file=out, flush=True)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        if runner is not None:
            await runner.cleanup()
        if probes is not None:
            await probes.cleanup()
        await bot.close()
    return EXIT_OK


def load_application(
    settings: Settings, environ: Mapping[str, str] | None, env_file: str
) -> tuple[type, DeskSettings | None]:
    """``COUNTERSIGN_APP`` (``module:Class``), else the Slack office desk (with its settings)."""
    target = (settings.countersign_app or "").strip()
    if not target:
        desk = load_desk_settings(environ, env_file=env_file)
        check_desk_model(desk, settings.model_providers())
        return build_desk(desk), desk
    module_name, colon, attribute = target.partition(":")
    if not colon or not module_name or not attribute:
        raise SettingsError(
            f"COUNTERSIGN_APP is malformed: module:ApplicationClass, e.g. myapp.office:Office, "
            f"not {target!r}"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SettingsError(_import_failure(module_name, error)) from None
    found = getattr(module, attribute, None)
    if not isinstance(spec_of(found), ApplicationSpec):
        raise SettingsError(
            f"COUNTERSIGN_APP is malformed: {target} is not a class decorated with @application"
        )
    assert isinstance(found, type)
    return found, None


def _import_failure(module_name: str, error: ImportError) -> str:
    """Why ``COUNTERSIGN_APP``'s module did not import: it is not found, or it failed itself."""
    missing = error.name if isinstance(error, ModuleNotFoundError) else None
    if missing is not None and (module_name == missing or module_name.startswith(f"{missing}.")):
        return (
            f"COUNTERSIGN_APP: the module {module_name} cannot be imported (no module named "
            f"{missing!r}): run from the folder that holds it, or add that folder to PYTHONPATH"
        )
    reason = " ".join(str(error).split())
    return f"COUNTERSIGN_APP: importing the module {module_name} failed: {reason}"
