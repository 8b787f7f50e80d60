"""``python -m bot demo``: the office desk (``bot.desk.demo``) in the terminal.

The agent's two tool calls pause at once, and the person at the prompt answers each in words,
read by the keyword reply interpreter (``?`` or ``help`` shows the words it reads). Loaded only
when the demo runs: it brings LangChain and LangGraph with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TextIO

from bot import (
    Answered,
    App,
    ExecutionResult,
    ExecutionStatus,
    PauseAuditEntry,
    PendingPause,
    Settings,
    UninterpretableReplyError,
    WorkflowStartText,
)
from bot.cli.terminal_batches import (
    LIST_WORDS,
    BatchCommand,
    answer_batch,
    batch_command,
    chosen,
    listed,
    question_line,
)
from bot.desk.demo import REQUEST, OfficeDeskApplication, OfficeDeskWorkflow
from bot.store.database import (
    DatabaseUrl,
    checkpoint_path,
    database_failure,
    database_url_problem,
)
from channels.terminal import TerminalOutput
from interpreters.keyword import HOW_TO_ANSWER, how_to_answer, verdict_words

TENANT_ID = "demo"
OWNER_ID = "terminal-user"  # the person at the prompt owns the thread, so answers its pauses
PROMPT = "approve / reject[: reason] / free text > "
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNAVAILABLE = 2
EXIT_INTERRUPTED = 130
_FAILED_CONNECTION_GRACE = 0.1  # seconds
HELP_WORDS = frozenset({"?", "help"})
APPROVE_ALL_WORDS = frozenset({"approve all", "all"})
"""What approves every waiting question at once (a batch, ``App.answer_all``)."""


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
    database_url: str,
    *,
    answers: Sequence[str] | None = None,
    output: TextIO | None = None,
    encryption_keys: str | None = None,
) -> int:
    """Run the office desk demo; the answers come from ``answers`` or standard input.

    ``encryption_keys`` is ``COUNTERSIGN_ENCRYPTION_KEYS`` (PostgreSQL needs it, like ``serve``);
    no model provider or database setting is read. A settings problem raises ``SettingsError``.
    """
    out = output or sys.stdout
    lines: LineSource = ListLines(answers) if answers is not None else StreamLines(sys.stdin)
    settings = Settings(countersign_encryption_keys=encryption_keys)
    try:
        return asyncio.run(DemoSession(database_url, lines, out, settings).run())
    except KeyboardInterrupt:
        _say(out, "\nInterrupted: the execution stays paused.")
        return EXIT_INTERRUPTED


class DemoSession:
    """One demo run: execute the office desk, answer its pauses at the prompt, report."""

    def __init__(
        self, database_url: str, lines: LineSource, out: TextIO, settings: Settings
    ) -> None:
        self._database_url = database_url
        self._lines = lines
        self._out = out
        self._settings = settings

    async def run(self) -> int:
        self._say("Countersign demo: an office desk agent asks before it acts.")
        self._say("model: offline demo model (scripted, no network)")
        self._say(f"database: {describe_database(self._database_url)}")
        app = await self._open()
        if app is None:
            return EXIT_UNAVAILABLE
        async with app:
            return await self._run(app)

    async def _open(self) -> App | None:
        """The demo's App, or ``None`` after one line saying why the database can't be opened."""
        url = self._database_url
        problem = database_url_problem(url) or _sqlite_folder_problem(url)
        if problem is None:
            try:
                terminal = TerminalOutput(self._out)
                app = await App.create(
                    OfficeDeskApplication,
                    database_url=url,
                    settings=self._settings,
                    services={TerminalOutput: terminal},
                )
                terminal.read_assembly(app)
                return app
            except Exception as error:
                reason = database_failure(error)
                if reason is None:
                    raise
                problem = f"the database could not be opened: {reason}"
                # aiosqlite stops the thread of a failed connection without waiting for it; let
                # it finish while this loop still runs (else: "Event loop is closed" in the thread)
                await asyncio.sleep(_FAILED_CONNECTION_GRACE)
        print(f"--database-url: {problem}", file=sys.stderr)
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
            resumed = await self._answer(app, result.pending, f"[{answered + 1}/{total}]")
            if resumed is None:
                self._stays_paused(len(result.pending))
                return EXIT_OK
            result, answered = resumed[0], answered + resumed[1]
        return self._report(result)

    async def _answer(
        self, app: App, pending: Sequence[PendingPause], number: str
    ) -> tuple[ExecutionResult, int] | None:
        """Ask about the first waiting question until a reply is understood (``approve all``:
        every waiting question at once); where the run stands and how many were answered, or
        ``None`` when the answers ran out."""
        pause = pending[0]  # pending lists pauses in the order they were asked
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
            if reply.strip().lower() in HELP_WORDS:
                self._say(answer_help())
                continue
            if reply.strip().lower() in LIST_WORDS:
                self._say("Waiting (approve 1,2 / approve all / reject all: reason):")
                for line in listed(pending):
                    self._say(line)
                continue
            command = batch_command(reply)
            if reply.strip().lower() in APPROVE_ALL_WORDS:
                command = BatchCommand(action="approve", numbers=None, reason=None)
            if command is not None:
                picked = chosen(command, pending)
                if isinstance(picked, str):
                    self._say(picked)
                    continue
                return await self._batch(app, command, picked, pending)
            try:
                resumed = await app.resume(
                    pause_id, reply=reply, tenant_id=TENANT_ID, owner_id=OWNER_ID, record=True
                )
                return resumed, 1
            except UninterpretableReplyError as error:
                hint = how_to_answer(error.language)
                reason = error.reason.removesuffix(hint).strip() or "no verdict found."
                self._say(f"Not understood: {reason} The question still waits; try again.")

    async def _batch(
        self,
        app: App,
        command: BatchCommand,
        picked: Sequence[PendingPause],
        pending: Sequence[PendingPause],
    ) -> tuple[ExecutionResult, int]:
        """Answer ``picked`` at once (``App.answer_all``, each as the list showed it), each
        listed first and each settled on its own, with a line for what became of each; where
        the run stands then and how many were answered."""
        verb = "Approving" if command.action == "approve" else "Rejecting"
        every = command.numbers is None and len(picked) == len(pending)
        many = "question" if len(picked) == 1 else "questions"
        self._say(
            f"{verb} the {len(picked)} {many} waiting:"
            if every
            else f"{verb} {len(picked)} {many}:"
        )
        for pause in picked:
            self._say(f"  - {question_line(pause)}")
        outcomes, lines = await answer_batch(app, command, picked, tenant_id=TENANT_ID, by=OWNER_ID)
        for line in lines:
            self._say(line)
        answered = [o for o in outcomes if isinstance(o, Answered)]
        root = answered[0].root_execution_id if answered else pending[0].execution_id
        return await app.get_result(root, tenant_id=TENANT_ID, record=True), len(answered)

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
        pauses = result.record.pauses if result.record is not None else []  # in the order asked
        self._say("\naudit trail:")
        for index, entry in enumerate(pauses, start=1):
            self._say(f"  {index}. {audit_line(entry)}")
        return EXIT_OK

    def _say(self, text: str) -> None:
        _say(self._out, text)


def answer_help() -> str:
    """What ``?`` shows: the words the keyword reply interpreter reads as a verdict."""
    how = HOW_TO_ANSWER.removesuffix(" or use the buttons.").removesuffix(",") + "."
    return "\n".join(
        (
            how,
            "  approve: " + ", ".join(verdict_words(approve=True)),
            "  reject:  " + ", ".join(verdict_words(approve=False)),
            'A reason follows ":" or "because" (reject: too expensive). A question, a condition '
            '("if", "unless") or doubt ("maybe") is not understood: the question waits.',
            "Several at once: list shows them numbered; approve all, approve 1,2, "
            "reject all: <reason>, reject 2: <reason>.",
        )
    )


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
    path = DatabaseUrl.parse(database_url).sqlite_path
    if path is not None and not path.resolve().parent.is_dir():
        return f"the folder {path.resolve().parent} does not exist"
    return None


def _in_memory(database_url: str) -> bool:
    return DatabaseUrl.parse(database_url).in_memory


def describe_database(database_url: str) -> str:
    """Where the demo keeps its state, for people (a file path; never a password)."""
    path = DatabaseUrl.parse(database_url).sqlite_path
    if path is None:
        return _location(database_url)
    return f"{path.resolve()} (SQLite; checkpoints beside it in {checkpoint_path(path).name})"


def _location(database_url: str) -> str:
    url = DatabaseUrl.parse(database_url)
    if not url.is_sqlite:
        return url.shown
    path = url.sqlite_path
    return "in memory (nothing is kept after the demo)" if path is None else str(path.resolve())
