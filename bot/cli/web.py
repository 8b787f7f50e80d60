"""``python -m bot`` without Slack settings: the office desk on the web, on 127.0.0.1.

It prints the address and an inbox link (the link signs its holder in); a person asks the desk
for something on the page and answers its questions there. HTTP on ``PORT`` (default 8000),
until SIGINT or SIGTERM. The database is ``DATABASE_URL`` (the embedded SQLite default); the
model is the offline demo model unless ``COUNTERSIGN_DESK_MODEL`` names one a provider serves.
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
from bot.cli.logs import configure_logging
from bot.core.errors import AssemblyError, SettingsError
from bot.desk.offline_model import OFFLINE_MODEL
from bot.desk.slack import DeskSettings, check_desk_model
from bot.desk.web import DESK_PERSON, DESK_TENANT, INBOX_NOTE, WebDesk, build_web_desk
from bot.security.key_source import key_source
from bot.settings import environment, load_settings
from channels.web import WebServer

EXIT_OK: Final = 0
EXIT_SETTINGS: Final = 2
HOST: Final = "127.0.0.1"  # a desk to try on this machine: nobody else reaches it
DEFAULT_PORT: Final = 8000


def serve_web_desk(environ: Mapping[str, str] | None = None, env_file: Path = Path(".env")) -> int:
    """Serve until a signal; the exit code."""
    return asyncio.run(_serve(environ, str(env_file), sys.stdout, sys.stderr))


async def _serve(environ: Mapping[str, str] | None, env_file: str, out: TextIO, err: TextIO) -> int:
    try:
        values = environment(environ, env_file=env_file)
        port = _port(values.get("PORT", ""))
        settings = load_settings(environ, env_file=env_file)
        configure_logging(settings)
        key_source(settings.database_url, settings.countersign_encryption_keys)
        model = values.get("COUNTERSIGN_DESK_MODEL", "").strip() or OFFLINE_MODEL
        check_desk_model(
            DeskSettings(approval_channel="", approvers=(), model=model),
            settings.model_providers(),
        )
        app = await App.create(build_web_desk(model), settings=settings)
    except (SettingsError, AssemblyError) as error:
        print(error.message, file=err)
        return EXIT_SETTINGS
    try:
        return await _run(app, port, out, err)
    finally:
        await app.close()


async def _run(app: App, port: int, out: TextIO, err: TextIO) -> int:
    base_url = f"http://{HOST}:{port}"
    server = WebServer(app, base_url=base_url, inbox_note=INBOX_NOTE)
    workflow = app.assembly.application.entry_workflow
    assert workflow is not None
    runner = web.AppRunner(WebDesk(app, server, workflow).web_app(), access_log=None)
    await runner.setup()  # no access log: a page's address holds its signed link
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        try:
            await web.TCPSite(runner, HOST, port).start()
        except OSError as error:
            print(f"PORT {port} cannot be served: {error.strerror or error}", file=err)
            return EXIT_SETTINGS
        print(f"Countersign serves the office desk on {base_url}/", file=out)
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


def _port(text: str) -> int:
    text = text.strip()
    if not text:
        return DEFAULT_PORT
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise SettingsError(f"PORT is malformed: a port number (1 to 65535), not {text!r}")
    return int(text)
