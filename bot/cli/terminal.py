"""The command line: ``python -m bot [serve | demo]``.

``demo`` runs the office desk (``bot.cli.demo``) in the terminal: the agent's two tool calls
pause at once, and the person at the prompt answers each in words, read by the keyword reply
interpreter. ``serve`` serves the Slack bot (``bot.slack.serve``); without the Slack settings it
names the missing ones and runs the demo instead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sqlite3
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from dotenv import dotenv_values
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError

from bot import (
    App,
    ExecutionResult,
    ExecutionStatus,
    PauseAuditEntry,
    PendingPause,
    Settings,
    UninterpretableReplyError,
    WorkflowStartText,
)
from bot.cli.demo import REQUEST, OfficeDeskApplication, OfficeDeskWorkflow
from bot.runtime.checkpoints import checkpoint_path
from bot.store.database import is_sqlite, sqlite_path
from channels.terminal import TerminalOutput
from interpreters.keyword import HOW_TO_ANSWER

DEMO_DATABASE_URL = "sqlite+aiosqlite:///countersign-demo.db"
TENANT_ID = "demo"
OWNER_ID = "terminal-user"  # the person at the prompt owns the thread, so answers its pauses
PROMPT = "approve / reject[: reason] / free text > "
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNAVAILABLE = 2
EXIT_INTERRUPTED = 130
_FAILED_CONNECTION_GRACE = 0.1  # seconds


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_demo(args.database_url, answers=args.answers)
    return serve()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description="Countersign: people approve, in Slack, what AI agents are about to do.",
        epilog="With no command, 'serve' runs. Try: python -m bot demo",
    )
    commands = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    commands.add_parser(
        "serve",
        help="serve the Slack bot (without its settings: names what is missing, runs the demo)",
        description="Serve the Slack bot: HTTP on PORT at /slack/events, or Socket Mode with "
        "SLACK_APP_TOKEN. Reads SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, COUNTERSIGN_APP (default: "
        "the Slack office desk, which needs COUNTERSIGN_APPROVAL_CHANNEL) and the model settings "
        "from the environment or .env.",
    )
    demo = commands.add_parser(
        "demo",
        help="run the office desk example in the terminal, with an offline model",
        description="Run the office desk example: an agent asks to refund a card and to book "
        "an expense, both at once; answer each at the prompt (or pipe the answers in).",
    )
    demo.add_argument(
        "--database-url",
        type=_database_url,
        default=DEMO_DATABASE_URL,
        metavar="URL",
        help=f"where executions and pauses are kept (default: {DEMO_DATABASE_URL})",
    )
    demo.add_argument(
        "--answers",
        type=_answers_file,
        metavar="FILE",
        help="read the answers from FILE, one a line, instead of from standard input",
    )
    return parser


def _database_url(text: str) -> str:
    try:
        make_url(text)
    except ArgumentError:
        raise argparse.ArgumentTypeError(
            f"not a database URL: {text!r} (e.g. sqlite+aiosqlite:///demo.db)"
        ) from None
    return text


def _answers_file(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise argparse.ArgumentTypeError(f"cannot read {path}: {error}") from None


# ------------------------------------------------------------------------------- serve


@dataclass(frozen=True, slots=True)
class RequiredSetting:
    name: str
    how_to_get: str


SLACK_SETTINGS = (
    RequiredSetting(
        "SLACK_BOT_TOKEN",
        "create the Slack app from manifest.yml and copy its Bot User OAuth Token "
        "(OAuth & Permissions, xoxb-...) into .env",
    ),
    RequiredSetting(
        "SLACK_SIGNING_SECRET",
        "copy the Signing Secret from the Slack app's Basic Information page into .env",
    ),
)


def serve(environ: Mapping[str, str] | None = None, env_file: Path = Path(".env")) -> int:
    """Serve the Slack bot; without its settings, say what is missing and run the demo."""
    missing = missing_settings(SLACK_SETTINGS, environ, env_file)
    if not missing:
        from bot.slack.serve import serve_slack  # Slack's libraries load only to serve

        return serve_slack(environ, env_file)
    for setting in missing:
        print(f"{setting.name} is missing: {setting.how_to_get}", file=sys.stderr)
    print("Running the terminal demo instead (python -m bot demo).\n", flush=True)
    return run_demo(DEMO_DATABASE_URL)


def missing_settings(
    required: Sequence[RequiredSetting],
    environ: Mapping[str, str] | None = None,
    env_file: Path = Path(".env"),
) -> list[RequiredSetting]:
    """The settings neither the environment nor ``env_file`` gives a non-blank value."""
    values: dict[str, str | None] = dict(dotenv_values(env_file)) if env_file.is_file() else {}
    values.update(os.environ if environ is None else environ)
    return [s for s in required if not (values.get(s.name) or "").strip()]


# ------------------------------------------------------------------------------- demo


class LineSource(Protocol):
    """Where the answers come from, one line at a time; ``None`` at the end."""

    @property
    def echoes(self) -> bool:
        """Whether the terminal shows what was typed (else the demo prints the answer)."""
        ...

    async def next_line(self) -> str | None: ...


class ListLines:
    """Answers given up front (``--answers FILE``)."""

    echoes = False

    def __init__(self, lines: Sequence[str]) -> None:
        self._lines = list(lines)

    async def next_line(self) -> str | None:
        return self._lines.pop(0) if self._lines else None


class StreamLines:
    """Answers read from a stream (standard input), typed or piped.

    Each line is read by a daemon thread: a blocking ``readline`` never stalls the event loop,
    and Ctrl-C is not held up by a read that can't be cancelled (the thread dies with the
    process).
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.echoes = _is_terminal(stream)

    async def next_line(self) -> str | None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        reader = threading.Thread(
            target=self._read_into, args=(loop, future), name="countersign-demo-input", daemon=True
        )
        reader.start()
        line = await future
        return line.rstrip("\r\n") if line else None

    def _read_into(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[str]) -> None:
        """In the reader thread: read one line and hand it (or the failure) to the loop."""
        line, failure = "", None
        try:
            line = self._stream.readline()
        except Exception as error:
            failure = error

        def settle() -> None:
            if future.done():  # cancelled meanwhile
                return
            if failure is not None:
                future.set_exception(failure)
            else:
                future.set_result(line)

        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile (e.g. after Ctrl-C)
            loop.call_soon_threadsafe(settle)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def run_demo(
    database_url: str = DEMO_DATABASE_URL,
    *,
    answers: Sequence[str] | None = None,
    output: TextIO | None = None,
) -> int:
    """Run the office desk demo; the answers come from ``answers`` or standard input."""
    out = output or sys.stdout
    lines: LineSource = ListLines(answers) if answers is not None else StreamLines(sys.stdin)
    try:
        return asyncio.run(DemoSession(database_url, lines, out).run())
    except KeyboardInterrupt:
        _say(out, "\nInterrupted: the execution stays paused.")
        return EXIT_INTERRUPTED


class DemoSession:
    """One demo run: execute the office desk, answer its pauses at the prompt, report."""

    def __init__(self, database_url: str, lines: LineSource, out: TextIO) -> None:
        self._database_url = database_url
        self._lines = lines
        self._out = out

    async def run(self) -> int:
        self._say("Countersign demo: an office desk agent asks before it acts.")
        self._say("model: offline demo model (scripted, no network)")
        self._say(f"database: {describe_database(self._database_url)}")
        app = await self._open()
        if app is None:
            return EXIT_FAILED
        async with app:
            return await self._run(app)

    async def _open(self) -> App | None:
        """The demo's App, or ``None`` after one line saying why the database can't be opened."""
        problem = _sqlite_folder_problem(self._database_url)
        if problem is None:
            try:
                return await App.create(
                    OfficeDeskApplication,
                    database_url=self._database_url,
                    settings=Settings(),  # the demo reads no model provider or database setting
                    services={TerminalOutput: TerminalOutput(self._out)},
                )
            except (SQLAlchemyError, sqlite3.Error, OSError) as error:
                problem = str(error.orig if isinstance(error, DBAPIError) else error)
                # aiosqlite stops the thread of a failed connection without waiting for it; let
                # it finish while this loop still runs (else: "Event loop is closed" in the thread)
                await asyncio.sleep(_FAILED_CONNECTION_GRACE)
        print(f"The database could not be opened: {problem}", file=sys.stderr)
        return None

    async def _run(self, app: App) -> int:
        self._say(f"\nrequest: {REQUEST}")
        self._say("The agent calls two tools at once; the terminal channel asks:")
        result = await app.execute(
            OfficeDeskWorkflow,
            WorkflowStartText(text=REQUEST),
            tenant_id=TENANT_ID,
            owner_id=OWNER_ID,
            record=True,
        )
        answered = 0
        while result.status is ExecutionStatus.PAUSED:
            total = answered + len(result.pending)
            resumed = await self._answer(app, result.pending[0], f"[{answered + 1}/{total}]")
            if resumed is None:
                self._stays_paused(len(result.pending))
                return EXIT_OK
            result, answered = resumed, answered + 1
        return self._report(result)

    async def _answer(self, app: App, pause: PendingPause, number: str) -> ExecutionResult | None:
        """Ask until a reply is understood; ``None`` when the answers ran out."""
        pause_id = pause.pause_id
        if pause_id is None:  # a CHANNEL pause: not the terminal's to answer
            raise RuntimeError(f"the demo cannot answer the {pause.channel} pause")
        arguments = json.dumps(pause.ask.arguments, ensure_ascii=False)
        self._say(f"\n{number} {pause.ask.tool} {arguments}")
        while True:
            reply = await self._prompt()
            if reply is None:
                return None
            if not reply.strip():
                continue
            try:
                return await app.resume(
                    pause_id, reply=reply, tenant_id=TENANT_ID, owner_id=OWNER_ID, record=True
                )
            except UninterpretableReplyError as error:
                reason = error.reason.removesuffix(HOW_TO_ANSWER).strip() or "no verdict found."
                self._say(f"Not understood: {reason} The question still waits; try again.")

    async def _prompt(self) -> str | None:
        self._out.write(PROMPT)
        self._out.flush()
        line = await self._lines.next_line()
        if line is None:
            self._say("")
        elif not self._lines.echoes:
            self._say(line)
        return line

    def _stays_paused(self, waiting: int) -> None:
        questions = "1 question waits" if waiting == 1 else f"{waiting} questions wait"
        self._say(f"No more answers: the execution stays paused ({questions}).")
        if _in_memory(self._database_url):
            self._say("The database is in memory, so it ends with this run.")
        else:
            self._say(f"It is kept in {_location(self._database_url)}.")

    def _report(self, result: ExecutionResult) -> int:
        if result.status is not ExecutionStatus.COMPLETED:
            self._say(f"\nThe execution ended {result.status.value}.")
            return EXIT_FAILED
        output = result.output if isinstance(result.output, dict) else {}
        self._say(f"\nanswer: {output.get('text', result.output)}")
        pauses = result.record.pauses if result.record is not None else []
        self._say("\naudit trail:")
        for index, entry in enumerate(pauses, start=1):
            self._say(f"  {index}. {audit_line(entry)}")
        return EXIT_OK

    def _say(self, text: str) -> None:
        _say(self._out, text)


def _say(out: TextIO, text: str) -> None:
    print(text, file=out, flush=True)


def audit_line(entry: PauseAuditEntry) -> str:
    """One audit entry for people: tool, how it was resolved, by whom, and the decision."""
    who = entry.responder or "nobody"
    return f"{entry.step.tool}: {entry.resolution.value} by {who}: {decision_text(entry.decision)}"


def decision_text(decision: Mapping[str, Any] | None) -> str:
    if decision is None:
        return "no decision"
    if decision.get("approved"):
        changed = decision.get("override_arguments")
        return f"approved with {json.dumps(changed)}" if changed else "approved"
    reason = decision.get("reason")
    return f"rejected: {reason}" if reason else "rejected"


def _sqlite_folder_problem(database_url: str) -> str | None:
    path = sqlite_path(database_url) if is_sqlite(database_url) else None
    if path is not None and not path.resolve().parent.is_dir():
        return f"the folder {path.resolve().parent} does not exist"
    return None


def _in_memory(database_url: str) -> bool:
    return is_sqlite(database_url) and sqlite_path(database_url) is None


def describe_database(database_url: str) -> str:
    """Where the demo keeps its state, for people (a file path; never a password)."""
    path = sqlite_path(database_url) if is_sqlite(database_url) else None
    if path is None:
        return _location(database_url)
    return f"{path.resolve()} (SQLite; checkpoints beside it in {checkpoint_path(path).name})"


def _location(database_url: str) -> str:
    if not is_sqlite(database_url):
        return make_url(database_url).render_as_string(hide_password=True)
    path = sqlite_path(database_url)
    return "in memory (nothing is kept after the demo)" if path is None else str(path.resolve())
