"""A batch at the terminal's prompt (issue 29 audit): a question answered elsewhere after the
list was shown is said to be skipped (``~``) and the others approved; the same batch typed
again answers nothing twice; a rejected batch records its one reason on each question."""

from __future__ import annotations

from bot import Answered, App, PauseStatus, WorkflowStartText
from bot.cli.terminal import OWNER_ID, TENANT_ID
from bot.cli.terminal_batches import answer_batch, batch_command
from bot.desk.demo import REQUEST, OfficeDeskApplication, OfficeDeskWorkflow
from channels.kit.texts import BATCH_APPROVED
from tests.cli.test_demo import MEMORY


async def test_a_batch_skips_one_answered_elsewhere_and_a_retry_answers_nothing_twice() -> None:
    async with await App.create(OfficeDeskApplication, database_url=MEMORY) as app:
        result = await app.execute(
            OfficeDeskWorkflow, WorkflowStartText(text=REQUEST), tenant_id=TENANT_ID,
            owner_id=OWNER_ID,
        )  # fmt: skip
        listed = result.pending  # the list the person saw
        first = listed[0].pause_id
        assert first is not None and len(listed) == 2
        elsewhere = await app.answer(  # answered elsewhere after the list was shown
            first, tenant_id=TENANT_ID, by=OWNER_ID, decision={"approved": True},
            continue_run=False,
        )  # fmt: skip
        assert isinstance(elsewhere, Answered)

        command = batch_command("approve all")
        assert command is not None
        outcomes, lines = await answer_batch(app, command, listed, tenant_id=TENANT_ID, by=OWNER_ID)
        assert lines[0].startswith("  ~ ") and "Already answered elsewhere, skipped" in lines[0]
        assert lines[1].startswith("  = ") and lines[1].endswith(BATCH_APPROVED)
        assert sum(isinstance(o, Answered) for o in outcomes) == 1

        _, again = await answer_batch(app, command, listed, tenant_id=TENANT_ID, by=OWNER_ID)
        assert all(line.startswith("  ~ ") for line in again)  # typed again: nothing twice
        for pause in listed:
            assert pause.pause_id is not None
            found = await app.find_pause(pause.pause_id, tenant_id=TENANT_ID)
            assert found is not None and found.status is not PauseStatus.PENDING


async def test_a_rejected_batch_records_its_one_reason_on_each_question() -> None:
    async with await App.create(OfficeDeskApplication, database_url=MEMORY) as app:
        result = await app.execute(
            OfficeDeskWorkflow, WorkflowStartText(text=REQUEST), tenant_id=TENANT_ID,
            owner_id=OWNER_ID,
        )  # fmt: skip
        command = batch_command("reject all: duplicate batch")
        assert command is not None
        await answer_batch(app, command, result.pending, tenant_id=TENANT_ID, by=OWNER_ID)
        for pause in result.pending:
            assert pause.pause_id is not None
            found = await app.find_pause(pause.pause_id, tenant_id=TENANT_ID)
            assert found is not None and found.decision is not None
            assert (found.decision.approved, found.decision.reason) == (False, "duplicate batch")
