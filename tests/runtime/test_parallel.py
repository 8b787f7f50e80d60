"""Spec: parallel branches, FailFast, quorums, per-item launches and child workflows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from bot import (
    AgentFailedError,
    ExecutionPauseEvent,
    ExecutionStatus,
    NotPausedError,
    PauseResolution,
    WorkflowStartText,
)
from bot.store.closings import Replied
from bot.testing import inspect_app
from tests.conftest import MakeOffice, Office
from tests.office import ASKED
from tests.parallel_app import (
    STEPPER,
    AllThreeWorkflow,
    ChildrenFailFastWorkflow,
    FailFastWorkflow,
    GrandparentWorkflow,
    HandledFailFastWorkflow,
    LateQuorumWorkflow,
    ParallelApplication,
    PaymentDeclinedError,
    PerItemChildrenWorkflow,
    PerItemWorkflow,
    QuorumWorkflow,
)


@pytest.fixture(autouse=True)
def _asked_gate() -> Iterator[None]:
    """Branches that must act after a sibling asked wait for the ask, not for time to pass."""
    ASKED.arm()
    yield
    ASKED.disarm()


async def _office(make_office: MakeOffice) -> Office:
    return await make_office(ParallelApplication)


async def _execute(office: Office, workflow: type, text: str = "refund 5") -> Any:
    return await office.app.execute(
        workflow, WorkflowStartText(text=text), tenant_id="acme", owner_id="U1"
    )


def _refund_ids(office: Office) -> list[str]:
    return [a.pause_id for a in office.inbox.asks if a.value.tool == "refund-card-tool"]


async def _approve(office: Office, pause_id: str, **kw: Any) -> Any:
    return await office.app.resume(
        pause_id, decision={"approved": True}, tenant_id="acme", answered_by="m", **kw
    )


async def test_two_branches_pause_and_a_three_step_sibling_finishes_in_the_same_pass(
    make_office: MakeOffice,
) -> None:
    office = await _office(make_office)
    STEPPER.calls.clear()
    result = await _execute(office, AllThreeWorkflow)
    assert result.status is ExecutionStatus.PAUSED
    assert len(result.pending) == 2
    assert [r[0] for r in office.ledger.runs] == ["lookup", "lookup", "lookup"]
    assert len(STEPPER.calls) == 4  # three tool turns and its answer, all in the first pass


async def test_answering_one_of_two_leaves_the_other_paused(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    events: list[ExecutionPauseEvent] = []
    office.app.on_execution_pause(events.append)
    await _execute(office, AllThreeWorkflow)
    first, second = _refund_ids(office)
    partial = await _approve(office, first)
    assert partial.status is ExecutionStatus.PAUSED
    assert len(partial.pending) == 1
    assert len(events) == 2  # rested again, with the other one
    done = await _approve(office, second)
    assert done.status is ExecutionStatus.COMPLETED
    text = done.output["text"]
    assert "asker-agent: refund:" in text and "stepper-agent: looked up 3 orders" in text
    assert [r[0] for r in office.ledger.runs].count("refund") == 2
    assert [r[0] for r in office.ledger.runs].count("lookup") == 3  # the sibling never re-ran


async def test_both_answered_before_one_pass_continue_together(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    result = await _execute(office, AllThreeWorkflow)
    store = inspect_app(office.app).store
    from bot.store.records import PauseAnswer

    first, second = _refund_ids(office)
    for pause_id in (first, second):  # phase 1 only, as two webhooks on another instance would
        assert await store.close(
            pause_id,
            Replied(answer=PauseAnswer(decision={"approved": True}, responder="m")),
            at=office.clock.now(),
            tenant_id="acme",
        )
    root = await store.get(result.execution_id)
    assert root is not None
    report = await inspect_app(office.app).continue_tree(root.execution_id)
    assert report.ran
    final = await office.app.get_result(result.execution_id, tenant_id="acme")
    assert final.status is ExecutionStatus.COMPLETED


async def test_fail_fast_withdraws_the_paused_sibling_and_fails_with_the_same_error(
    make_office: MakeOffice,
) -> None:
    office = await _office(make_office)
    with pytest.raises(AgentFailedError) as error:
        await _execute(office, FailFastWorkflow)
    assert isinstance(error.value.__cause__, PaymentDeclinedError)
    [pause_id] = _refund_ids(office)
    [withdrawal] = office.inbox.withdrawals
    assert withdrawal.pause_id == pause_id
    assert withdrawal.resolution is PauseResolution.WITHDRAWN
    with pytest.raises(NotPausedError):
        await _approve(office, pause_id)
    assert office.ledger.runs.count(("refund", {})) == 0


async def test_fail_fast_with_a_join_handler_goes_on_in_the_same_call(
    make_office: MakeOffice,
) -> None:
    office = await _office(make_office)
    result = await _execute(office, HandledFailFastWorkflow)
    assert result.status is ExecutionStatus.COMPLETED
    assert result.pending == []
    assert result.output["text"].startswith("declined: card declined for X")
    assert "asker-agent" in result.output["text"]
    assert len(office.inbox.withdrawals) == 1
    record = await office.app.get_result(result.execution_id, tenant_id="acme", record=True)
    assert record.record is not None
    assert [e.resolution for e in record.record.pauses] == [PauseResolution.WITHDRAWN]


async def test_a_quorum_of_two_of_three_withdraws_the_third_once(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    result = await _execute(office, QuorumWorkflow)
    assert result.status is ExecutionStatus.COMPLETED
    assert result.pending == []
    assert len(office.inbox.withdrawals) == 1
    [pause_id] = _refund_ids(office)
    with pytest.raises(NotPausedError):
        await _approve(office, pause_id)
    assert len(office.inbox.withdrawals) == 1


async def test_a_quorum_found_decided_on_a_resume(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    result = await _execute(office, LateQuorumWorkflow)  # quick done, two askers paused
    assert result.status is ExecutionStatus.PAUSED
    first, second = _refund_ids(office)
    done = await _approve(office, first)
    assert done.status is ExecutionStatus.COMPLETED
    assert done.pending == []
    [withdrawal] = office.inbox.withdrawals
    assert withdrawal.pause_id == second
    with pytest.raises(NotPausedError):
        await _approve(office, second)


async def test_per_item_launch_lists_item_indexes_and_frees_slots(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    items = '["order 1", "order 2", "order 3"]'
    result = await _execute(office, PerItemWorkflow, items)
    # max_concurrency=2, but a paused branch frees its slot: all three ask in the first pass
    assert result.status is ExecutionStatus.PAUSED
    assert sorted(p.item_index for p in result.pending) == [0, 1, 2]
    for pause_id in _refund_ids(office):
        last = await _approve(office, pause_id)
    assert last.status is ExecutionStatus.COMPLETED
    assert sorted(r[1]["amount"] for r in office.ledger.runs) == [1.0, 2.0, 3.0]
    record = await office.app.get_result(last.execution_id, tenant_id="acme", record=True)
    assert record.record is not None
    assert Counter(e.step.item_index for e in record.record.pauses) == Counter([0, 1, 2])


async def test_a_grandchild_pause_is_answered_from_the_root(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    result = await _execute(office, GrandparentWorkflow)
    assert result.status is ExecutionStatus.PAUSED
    [pending] = result.pending
    assert pending.child_execution_id is not None
    assert pending.child_execution_id != result.execution_id
    [pause_id] = _refund_ids(office)
    done = await _approve(office, pause_id, record=True)
    assert done.status is ExecutionStatus.COMPLETED
    assert done.execution_id == result.execution_id
    assert done.output["text"].startswith("refund:")
    assert done.record is not None
    [entry] = done.record.pauses
    assert entry.execution_id == pending.child_execution_id


async def test_fail_fast_under_parallel_workflows_withdraws_a_sibling_childs_pause(
    make_office: MakeOffice,
) -> None:
    office = await _office(make_office)
    with pytest.raises(AgentFailedError):
        await _execute(office, ChildrenFailFastWorkflow)
    [withdrawal] = office.inbox.withdrawals
    assert withdrawal.resolution is PauseResolution.WITHDRAWN
    assert await office.app.list_pending(tenant_id="acme") == []


async def test_per_item_children_each_get_their_own_execution(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    result = await _execute(office, PerItemChildrenWorkflow, "order 4\norder 6")
    assert sorted(p.item_index for p in result.pending) == [0, 1]
    children = {p.child_execution_id for p in result.pending}
    assert len(children) == 2 and result.execution_id not in children
    for pause_id in _refund_ids(office):
        done = await _approve(office, pause_id)
    assert done.status is ExecutionStatus.COMPLETED
    rows = await inspect_app(office.app).store.list_executions_by_root(result.execution_id)
    child_rows = [r for r in rows if r.parent_execution_id == result.execution_id]
    assert sorted(r.status for r in child_rows) == [ExecutionStatus.COMPLETED] * 2


async def test_a_deadline_passing_while_resting_withdraws_its_questions_then(
    make_office: MakeOffice,
) -> None:
    """The sweep on the clock moves the tree at the deadline: the quorum is decided with what
    finished, the waiting questions are withdrawn then (their buttons go away on time), and a
    later answer is refused like any late answer."""
    from datetime import timedelta

    from tests.parallel_app import DeadlineApplication, DeadlineQuorumWorkflow

    office = await make_office(DeadlineApplication)
    result = await _execute(office, DeadlineQuorumWorkflow)  # quick done, two askers wait
    assert result.status is ExecutionStatus.PAUSED
    await office.clock.advance(timedelta(minutes=59))
    assert office.inbox.withdrawals == []
    await office.clock.advance(timedelta(minutes=1, seconds=30))  # a sweep after the deadline
    first, second = _refund_ids(office)
    assert sorted(w.pause_id for w in office.inbox.withdrawals) == sorted([first, second])
    assert {w.resolution for w in office.inbox.withdrawals} == {PauseResolution.WITHDRAWN}
    done = await office.app.get_result(result.execution_id, tenant_id="acme", record=True)
    assert done.status is ExecutionStatus.COMPLETED
    assert done.output is not None
    assert done.output["text"] == "quick-agent: quick answer to refund 5"
    assert done.record is not None
    assert [e.resolution for e in done.record.pauses] == [PauseResolution.WITHDRAWN] * 2
    with pytest.raises(NotPausedError):
        await _approve(office, first)
    assert [r for r in office.ledger.runs if r[0] == "refund"] == []
    assert len(office.inbox.withdrawals) == 2  # told once each


async def test_an_answer_after_the_deadline_is_refused_before_the_sweep_runs(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never recorded as an approval that did nothing: refused, the pause untouched, and the
    next sweep withdraws it."""
    from datetime import timedelta

    from bot.runtime.engine import Engine
    from tests.parallel_app import DeadlineApplication, DeadlineQuorumWorkflow

    office = await make_office(DeadlineApplication)
    result = await _execute(office, DeadlineQuorumWorkflow)
    close_due = Engine.close_due

    async def no_sweep(self: Engine) -> int:
        return 0

    monkeypatch.setattr(Engine, "close_due", no_sweep)
    await office.clock.advance(timedelta(hours=2))
    first, second = _refund_ids(office)
    with pytest.raises(NotPausedError) as late:
        await _approve(office, first)
    assert "closed at its deadline" in str(late.value)
    still = await office.app.get_result(result.execution_id, tenant_id="acme", record=True)
    assert still.status is ExecutionStatus.PAUSED and len(still.pending) == 2
    assert still.record is not None and still.record.pauses == []  # nothing recorded
    monkeypatch.setattr(Engine, "close_due", close_due)
    assert await office.app.close_due() == 1
    assert await office.app.close_due() == 0
    done = await office.app.get_result(result.execution_id, tenant_id="acme")
    assert done.status is ExecutionStatus.COMPLETED
    assert done.output is not None
    assert done.output["text"] == "quick-agent: quick answer to refund 5"
    assert sorted(w.pause_id for w in office.inbox.withdrawals) == sorted([first, second])
    assert [r for r in office.ledger.runs if r[0] == "refund"] == []


async def test_an_answer_in_time_is_continued_even_if_the_pass_comes_after_the_deadline(
    make_office: MakeOffice, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recorded before the deadline, taken by a pass after it: the approved tool runs."""
    from datetime import timedelta

    from bot.runtime.engine import Engine, PassReport
    from tests.parallel_app import DeadlineApplication, DeadlineQuorumWorkflow

    office = await make_office(DeadlineApplication)
    result = await _execute(office, DeadlineQuorumWorkflow)
    first, second = _refund_ids(office)

    async def no_pass(self: Engine, root: str) -> PassReport:
        return PassReport(ran=False)

    continue_tree = Engine.continue_tree
    monkeypatch.setattr(Engine, "continue_tree", no_pass)
    await _approve(office, first)  # recorded in time; its pass does not run yet
    monkeypatch.setattr(Engine, "continue_tree", continue_tree)
    await office.clock.advance(timedelta(hours=1, minutes=1))  # recovery or the deadline sweep
    done = await office.app.get_result(result.execution_id, tenant_id="acme", record=True)
    assert done.status is ExecutionStatus.COMPLETED
    assert len([r for r in office.ledger.runs if r[0] == "refund"]) == 1
    assert [w.pause_id for w in office.inbox.withdrawals] == [second]


async def test_before_the_deadline_the_quorum_waits(make_office: MakeOffice) -> None:
    from datetime import timedelta

    from tests.parallel_app import DeadlineApplication, DeadlineQuorumWorkflow

    office = await make_office(DeadlineApplication)
    await _execute(office, DeadlineQuorumWorkflow)
    await office.clock.advance(timedelta(minutes=30))
    first, _ = _refund_ids(office)
    partial = await _approve(office, first)
    assert partial.status is ExecutionStatus.PAUSED  # 2 of 3 and the deadline not passed
    assert office.inbox.withdrawals == []


async def test_each_childs_record_lists_its_own_pauses(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    result = await _execute(office, PerItemChildrenWorkflow, "order 4\norder 6")
    for pause_id in _refund_ids(office):
        done = await _approve(office, pause_id, record=True)
    assert done.record is not None
    assert len(done.record.pauses) == 2  # the root's record: the whole tree's
    children = done.record.children
    assert len(children) == 2
    for child in children:
        [entry] = child.pauses
        assert entry.execution_id == child.execution_id
        assert child.status is ExecutionStatus.COMPLETED
    assert sorted(c.pauses[0].step.item_index for c in children) == [0, 1]
    assert result.execution_id not in {c.execution_id for c in children}


async def test_a_grandchilds_pauses_are_in_its_own_record(make_office: MakeOffice) -> None:
    office = await _office(make_office)
    await _execute(office, GrandparentWorkflow)
    [pause_id] = _refund_ids(office)
    done = await _approve(office, pause_id, record=True)
    assert done.record is not None
    [middle] = done.record.children
    assert middle.workflow == "middle-workflow"
    assert middle.pauses == []
    [leaf] = middle.children
    assert leaf.workflow == "refund-child-workflow"
    assert [e.execution_id for e in leaf.pauses] == [leaf.execution_id]


async def test_on_error_handles_a_failing_step_and_the_flow_goes_on(
    make_office: MakeOffice,
) -> None:
    from tests.parallel_app import RescuedApplication, RescuedWorkflow

    ASKED.disarm()  # nothing to wait for: the failing tool fails at once
    office = await make_office(RescuedApplication)
    result = await _execute(office, RescuedWorkflow)
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output["text"] == "quick answer to rescued: card declined for X"


async def test_a_quorum_group_that_wins_withdraws_the_other_group(make_office: MakeOffice) -> None:
    from tests.parallel_app import GroupsWorkflow, JoinsApplication

    office = await make_office(JoinsApplication)
    result = await _execute(office, GroupsWorkflow)  # "fast" (quick, stepper) wins
    assert result.status is ExecutionStatus.COMPLETED
    assert len(office.inbox.withdrawals) == 2  # both askers of "slow" withdrawn
    assert "quick-agent" in result.output["text"] and "stepper-agent" in result.output["text"]


async def test_an_unreachable_quorum_is_a_join_error(make_office: MakeOffice) -> None:
    from tests.parallel_app import JoinsApplication, UnreachableWorkflow

    office = await make_office(JoinsApplication)
    result = await _execute(office, UnreachableWorkflow)
    assert result.status is ExecutionStatus.COMPLETED
    assert result.output["text"].startswith("unreachable: ")
    assert len(office.inbox.withdrawals) == 1


async def test_on_join_error_by_step_failed_takes_an_agent_failing_with_a_domain_error(
    make_office: MakeOffice,
) -> None:
    from tests.parallel_app import JoinsApplication, StepFailedHandlerWorkflow

    office = await make_office(JoinsApplication)
    result = await _execute(office, StepFailedHandlerWorkflow)
    assert result.output["text"] == "a step failed: AgentFailedError"
