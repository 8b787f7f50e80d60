"""On PostgreSQL an answer to a question this process asked reads no pause first: the pass's
rest left the row in the store's memory with its version (``bot.store.recent_pauses``), and the
answer's one write closes it only if the row is still that version. When anything wrote the row
since, nothing is written and the answer is checked again against the row read — so what it
becomes is what it would have become without the memory. SQLite keeps no such memory."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bot import App, WorkflowStartText
from bot.core.answers import AlreadyClosed, Answered, Refused
from bot.core.errors import NotPausedError
from bot.core.results import PauseView
from bot.runtime.answers import AnswerCheck
from bot.store.closings import Replied
from bot.store.records import PauseAnswer
from bot.store.sql import SqlStore
from tests.benchmarks.cycle_cost import bench_app
from tests.benchmarks.resume_throughput import Inbox, PayWorkflow
from tests.databases import BACKENDS, database


class Reads:
    """Every read of a pause by its id (``SqlStore.find``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made = 0
        find = SqlStore.find

        async def counted(store: SqlStore, tenant_id: str, pause_id: str) -> Any:
            self.made += 1
            return await find(store, tenant_id, pause_id)

        monkeypatch.setattr(SqlStore, "find", counted)


@contextlib.asynccontextmanager
async def paused(
    kind: str, tmp_path: Path, invoice: str = "inv-1"
) -> AsyncIterator[tuple[App, str]]:
    """An app on ``kind`` with one question waiting, asked by this process; its pause id."""
    inbox = Inbox()
    async with database(kind, tmp_path) as url, bench_app(url, inbox) as app:
        await app.execute(PayWorkflow, WorkflowStartText(text=invoice), tenant_id="t", owner_id="o")
        yield app, inbox.pending.pop(invoice)


def only(who: str) -> Callable[[str], AnswerCheck]:
    """A channel's rule that lets ``who`` answer and no one else, for the person answering."""

    def rule_for(by: str) -> AnswerCheck:
        async def rule(_view: PauseView) -> str | None:
            return None if by == who else f"only {who} may answer"

        return rule

    return rule_for


@pytest.mark.parametrize("kind", BACKENDS)
async def test_an_answer_to_a_question_this_process_asked_reads_no_pause_on_postgresql(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)
    async with paused(kind, tmp_path) as (app, pause_id):
        done = await app.resume(
            pause_id, decision={"approved": True}, tenant_id="t", answered_by="m"
        )
        assert done.output == {"text": "paid"}
        assert reads.made == (0 if kind == "postgres" else 1)
        with pytest.raises(NotPausedError, match="already answered by m"):  # read: not kept
            await app.resume(pause_id, decision={"approved": True}, tenant_id="t", answered_by="n")
        assert reads.made == (1 if kind == "postgres" else 2)
        [entry] = await app._runtime.store.find_pause_answers("t", done.execution_id)
        assert entry.responder == "m"


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_question_reassigned_since_its_rest_is_answered_as_the_row_says(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handed to ann after the rest, by boss (whom the channel's rule lets answer): ann, whom
    the rule refuses, answers as the row read says she may; the handover is in her entry."""
    rule = only("boss")
    async with paused(kind, tmp_path) as (app, pause_id):
        await app.reassign(pause_id, tenant_id="t", by="boss", to="ann", may_answer=rule("boss"))
        reads = Reads(monkeypatch)
        outcome = await app.answer(
            pause_id, tenant_id="t", by="ann", decision={"approved": True}, may_answer=rule("ann")
        )
        assert isinstance(outcome, Answered), outcome
        assert reads.made == 1  # the remembered row had changed: read, checked again
        store = app._runtime.store
        [entry] = await store.find_pause_answers("t", outcome.root_execution_id)
        assert entry.responder == "ann" and [h.to for h in entry.handovers] == ["ann"]


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_question_answered_elsewhere_since_its_rest_is_not_answered_again(
    kind: str, tmp_path: Path
) -> None:
    """Answered by another instance meanwhile (its own write of the row): this answer is told
    who answered first, as the row read says."""
    async with paused(kind, tmp_path) as (app, pause_id):
        elsewhere = Replied(
            answer=PauseAnswer(decision={"approved": False, "reason": "no"}, responder="zed"),
            audit_decision={"approved": False, "reason": "no"},
        )
        at = app.clock.now()
        assert await app._runtime.store.close(pause_id, elsewhere, at=at, tenant_id="t")
        outcome = await app.answer(pause_id, tenant_id="t", by="m", decision={"approved": True})
        assert isinstance(outcome, AlreadyClosed), outcome
        assert "already answered by zed" in str(outcome.error)


@pytest.mark.parametrize("kind", BACKENDS)
async def test_a_question_refused_from_memory_is_refused_as_the_row_says(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refusal is never told from the row kept in memory: the rule refuses, the row is read,
    the refusal stands, and the question still waits for an answer that is let through."""
    rule = only("boss")
    async with paused(kind, tmp_path) as (app, pause_id):
        reads = Reads(monkeypatch)
        outcome = await app.answer(
            pause_id, tenant_id="t", by="eve", decision={"approved": True}, may_answer=rule("eve")
        )
        assert isinstance(outcome, Refused) and "only boss may answer" in str(outcome.error)
        assert reads.made == 1
        outcome = await app.answer(
            pause_id, tenant_id="t", by="boss", decision={"approved": True}, may_answer=rule("boss")
        )
        assert isinstance(outcome, Answered), outcome


async def test_an_answer_checked_again_links_to_the_pass_that_asked_once(
    tmp_path: Path, spans: Any
) -> None:
    """The remembered row changed since the rest (here marked sent again, which moves its
    version): the answer is checked twice, and its span still links once to where it was
    asked."""
    pytest.importorskip("opentelemetry.sdk.trace")
    async with paused("postgres", tmp_path) as (app, pause_id):
        assert await app._runtime.store.mark_sent(pause_id) is not None  # the row rewritten
        spans.clear()
        done = await app.resume(
            pause_id, decision={"approved": True}, tenant_id="t", answered_by="m"
        )
        assert done.output == {"text": "paid"}
    [resume] = [s for s in spans.get_finished_spans() if s.name == "countersign.resume"]
    assert [link.attributes["countersign.link"] for link in resume.links] == ["asked"]
