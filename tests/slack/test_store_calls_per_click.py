"""What one Approve click costs the store, pinned: the read and write calls (transactions) on
Countersign's tables from the signed click to its message updated, counted as the benchmark
counts them (``tests.benchmarks.cycle_cost --part clicks``: SQLAlchemy's listeners on every
engine). A change that adds a call per click fails here; one that saves a call lowers the pin.

Issue 32's target is 2 reads and 4 writes per click, and both are met. The reads: the pause
before the ack, its message's references after it. The writes: the answer (which also opens
the tree: its lease taken, its waiting pauses read, RUNNING — ``PauseStore.close_opening``) and
the runtime's two (take the tool call, end the tree) each guard a guarantee at their own moment
(the answer persisted before the ack; the call taken before the tool runs, so a tool never runs
twice; the tool's result rides on the tree's end, LangGraph's write of the tool's task keeping
it from running again meanwhile — ``RunFrame.held_results``), then the message's
references closed once Slack showed the outcome, in the same write as the run's end recorded
told, the last thing its telling records (``ExecutionResumeEvent.end_told``: a process that
dies first leaves both to be done again)."""

from __future__ import annotations

from sqlalchemy import update

from bot.store.tables import message_refs
from channels.slack.render import APPROVE_ACTION
from tests.benchmarks.cycle_cost import Counting, Tally
from tests.slack.checks import all_text
from tests.slack.conftest import SlackWorld
from tests.slack.office import MANAGER
from tests.slack.test_clicks import ask_refund
from tests.slack.test_notes import ask_refund_in_thread, note_updates

READ_CALLS = 2
"""The pause read before the ack; its message's references (the question's and an escalated
copy's) after it."""
WRITE_CALLS = 4
"""The answer with the tree opened; the tool taken, the tree ended with its result (the runtime's);
the message's references closed with the run's end told (``told_at``) in one write."""


NOTED_READ_CALLS = 3
"""A run started in a Slack thread: the requester's note read too (where to update it)."""
NOTED_WRITE_CALLS = 7
"""A run started in a Slack thread: the run's end said there too, owed (INSERT) until Slack
took it (DELETE) — at least once, said once, across instances (``SlackGateway.tell_run_end``);
said after the references close, so the end is recorded told in a write of its own."""


async def click_counted(world: SlackWorld, pause_id: str) -> Tally:
    tally = Tally()
    counting = Counting()
    with counting.listening(world.app.checkpointer), counting.phase(tally):
        response = await world.click(MANAGER, APPROVE_ACTION, pause_id)
        assert response.status == 200
        await world.settle()
    return tally


def statements_on(tally: Tally, table: str) -> list[str]:
    return [s for s in tally.statements.elements() if f" {table} " in f"{s} " or f" {table}." in s]


async def test_an_approve_click_makes_at_most_the_pinned_store_calls(world: SlackWorld) -> None:
    warm = await ask_refund(world)  # the first click of a process may set things up
    await click_counted(world, warm)
    pause_id = await ask_refund(world)

    tally = await click_counted(world, pause_id)

    shown = all_text(world.stub.of("chat.update")[-1].blocks())
    assert f"*Approved* by <@{MANAGER}>" in shown
    assert "The tool returned: “{" in shown  # the result, saved with the run's end: no read
    assert tally.read_calls <= READ_CALLS and tally.write_calls <= WRITE_CALLS, tally.shown(1)


async def test_a_click_in_a_burst_leaves_opening_its_run_to_after_the_acks(
    world: SlackWorld,
) -> None:
    """Another request being acked beside it: the click's write before its 200 is the answer
    alone (a longer write would hold the burst's acks back), and its run is opened after."""
    warm = await ask_refund(world)
    await click_counted(world, warm)
    pause_id = await ask_refund(world)

    with world.bot.tasks.gate.acking():  # another request, in the middle of its ack
        tally = await click_counted(world, pause_id)

    assert f"*Approved* by <@{MANAGER}>" in all_text(world.stub.of("chat.update")[-1].blocks())
    [answered] = [
        t for t in tally.transactions_seen if any("INSERT INTO cs_pause_answers" in s for s in t)
    ]
    assert not any("cs_leases" in s for s in answered), tally.shown(1)
    assert tally.write_calls == WRITE_CALLS + 1, tally.shown(1)  # the run opened on its own


async def test_a_click_reads_and_closes_its_message_references_once(world: SlackWorld) -> None:
    pause_id = await ask_refund(world)
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.noted is False  # asked where its requester sees it

    tally = await click_counted(world, pause_id)

    refs = statements_on(tally, "cs_message_refs")
    assert [s.split()[0] for s in refs] == ["SELECT", "UPDATE"], refs  # the copy's with it
    assert statements_on(tally, "cs_slack_notes") == []  # no note: its reference says so
    assert statements_on(tally, "cs_outbox") == []


async def test_a_click_records_its_runs_end_told_in_the_write_closing_its_references(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund(world)

    tally = await click_counted(world, pause_id)

    [closing] = [
        t
        for t in tally.transactions_seen
        if any(" cs_message_refs " in s for s in t) and not _read(t)
    ]
    assert [s.split()[:2] for s in closing] == [
        ["UPDATE", "cs_message_refs"],
        ["UPDATE", "cs_executions"],
    ]
    assert "told_at" in closing[1]
    assert not [
        s for s in statements_on(tally, "cs_executions") if s not in closing and "told_at" in s
    ]


async def test_a_run_whose_end_is_said_in_its_thread_is_recorded_told_after_it(
    world: SlackWorld,
) -> None:
    """Its end is said after the references close (owed in the outbox until Slack took it):
    the close cannot carry it, the App records it told once the end was said."""
    pause_id = await ask_refund_in_thread(world)

    tally = await click_counted(world, pause_id)

    [closing] = [
        t
        for t in tally.transactions_seen
        if any(" cs_message_refs " in s for s in t) and not _read(t)
    ]
    assert [s.split()[:2] for s in closing] == [["UPDATE", "cs_message_refs"]]
    told = [t for t in tally.transactions_seen if any("told_at" in s for s in t)]
    assert len(told) == 1 and len(told[0]) == 1, tally.shown(1)  # a write of its own


def _read(statements: tuple[str, ...]) -> bool:
    return all(s.startswith("SELECT") for s in statements)


async def test_a_click_on_a_question_with_a_note_still_updates_the_note(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund_in_thread(world)
    ref = await world.bot.messages.get(pause_id)
    assert ref is not None and ref.noted is True  # asked out of the requester's thread

    tally = await click_counted(world, pause_id)

    assert len(note_updates(world)) == 1
    assert [s.split()[0] for s in statements_on(tally, "cs_message_refs")] == ["SELECT", "UPDATE"]


async def test_a_reference_stored_before_notes_were_kept_on_it_still_has_its_note_updated(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund_in_thread(world)
    stored = await world.bot.messages.get(pause_id)
    assert stored is not None
    older = {"ts": stored.ts, "thread_ts": stored.thread_ts}  # as an earlier version kept it
    await world.app.database.transactions.write(
        lambda connection: connection.execute(
            update(message_refs).where(message_refs.c.pause_id == pause_id).values(reference=older)
        )
    )
    before = await world.bot.messages.get(pause_id)
    assert before is not None and before.noted is None

    tally = await click_counted(world, pause_id)

    assert len(note_updates(world)) == 1
    assert len(statements_on(tally, "cs_slack_notes")) >= 1  # looked up, as before


async def test_a_click_on_a_run_started_in_slack_makes_at_most_the_pinned_store_calls(
    world: SlackWorld,
) -> None:
    pause_id = await ask_refund_in_thread(world)

    tally = await click_counted(world, pause_id)

    assert len(note_updates(world)) == 1
    assert tally.read_calls <= NOTED_READ_CALLS, tally.shown(1)
    assert tally.write_calls <= NOTED_WRITE_CALLS, tally.shown(1)
