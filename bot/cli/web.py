"""``python -m bot`` without Slack settings: the office desk (or ``COUNTERSIGN_GRAPH``'s graphs,
``bot.served.web_desk``) on the web, on 127.0.0.1.

It prints the address and an inbox link (the link signs its holder in); a person asks the desk
for something on the page and answers its questions there. HTTP on ``PORT`` (default 8000) at
``COUNTERSIGN_BIND_ADDRESS`` (default 127.0.0.1), until SIGINT or SIGTERM. The database is
``DATABASE_URL`` (the embedded SQLite default); the model is the offline demo model unless
``COUNTERSIGN_DESK_MODEL`` names one a provider serves.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final, TextIO

from aiohttp import web

from bot.app import App
from bot.cli.binding import Binding
from bot.cli.heap import limit_malloc_arenas
from bot.cli.logs import logging_as
from bot.cli.preflight import check_web_desk, web_desk_settings
from bot.cli.traces import run_traced
from bot.core.errors import AssemblyError, SettingsError
from bot.desk.settings import load_served_settings
from bot.desk.web import DESK_PERSON, DESK_TENANT, INBOX_NOTE, WebDesk, build_web_desk
from bot.langgraph import LangGraphAgent
from bot.served.application import ServedApplication
from bot.served.serve import web_application
from bot.served.targets import GRAPH_SETTING
from bot.served.web_desk import INBOX_NOTE as GRAPH_INBOX_NOTE
from bot.served.web_desk import GraphDesk
from bot.settings import load_settings
from channels.web import WebServer

EXIT_OK: Final = 0
EXIT_SETTINGS: Final = 2
HOST: Final = "127.0.0.1"  # a desk to try on this machine: nobody else reaches it


def serve_web_desk(environ: Mapping[str, str] | None = None, env_file: Path = Path(".env")) -> int:
    """Serve until a signal; the exit code."""
    limit_malloc_arenas()  # before any worker thread: RSS stays flat (bot.cli.heap)
    return run_traced(environ, lambda: _serve(environ, env_file, sys.stdout, sys.stderr))


async def _serve(
    environ: Mapping[str, str] | None, env_file: Path, out: TextIO, err: TextIO
) -> int:
    try:
        port = check_web_desk(environ, env_file)
        settings = load_settings(environ, env_file=str(env_file))
    except SettingsError as error:
        print(error.message, file=err)
        return EXIT_SETTINGS
    with logging_as(settings):
        graphs: ServedApplication | None = None
        try:
            served = load_served_settings(environ, env_file=str(env_file), slack=False)
            if served is not None:
                graphs = web_application(served)  # your graphs: imported and checked
                application = graphs.application
            else:
                application = build_web_desk(web_desk_settings(environ, env_file).model)
            app = await App.create(application, settings=settings)
        except (SettingsError, AssemblyError) as error:
            print(error.message, file=err)
            return EXIT_SETTINGS
        try:
            binding = Binding.of(settings.countersign_bind_address, port, default=HOST)
            if graphs is None:
                return await _run(app, binding, out, err)
            try:
                agents = graphs.attach(app)
            except AssemblyError as error:
                print(f"{GRAPH_SETTING}: {error.message}", file=err)
                return EXIT_SETTINGS
            return await _run(app, binding, out, err, agents=agents)
        finally:
            await app.close()


async def _run(
    app: App,
    binding: Binding,
    out: TextIO,
    err: TextIO,
    *,
    agents: tuple[LangGraphAgent, ...] = (),
) -> int:
    base_url = binding.url
    if agents:
        server = WebServer(app, base_url=base_url, inbox_note=GRAPH_INBOX_NOTE)
        pages = GraphDesk(app, server, agents).web_app()
        what = "your graph " + ", ".join(a.name for a in agents)
    else:
        server = WebServer(app, base_url=base_url, inbox_note=INBOX_NOTE)
        workflow = app.assembly.application.entry_workflow
        assert workflow is not None
        pages = WebDesk(app, server, workflow).web_app()
        what = "the office desk"
    runner = web.AppRunner(pages, access_log=None)
    await runner.setup()  # no access log: a page's address holds its signed link
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        problem = await binding.serve(runner)
        if problem is not None:
            print(problem, file=err)
            return EXIT_SETTINGS
        print(f"Countersign serves {what} on {base_url}/", file=out)
        print(
            f"Open your inbox (the link signs you in as {DESK_PERSON!r}): "
            f"{server.inbox_url(DESK_PERSON, tenant_id=DESK_TENANT)}",
            file=out,
            flush=True,
        )
        await stop.wait()
        print("Stopping.", file=out, flush=True)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await runner.cleanup()
    return EXIT_OK
