"""Who approved a question that needs several approvals, computed once in the kit's question
view and said the same way by every channel, waiting and closed (the terminal's lines here;
Slack and the web page in ``tests/slack/test_four_eyes.py`` and ``tests/web/test_four_eyes.py``)."""

from __future__ import annotations

from typing import Any

from channels.kit.catalog import KitCatalog
from channels.kit.outcomes import Approved, words_of
from channels.kit.question import question_view
from channels.terminal import outcome_lines, question_lines
from tests.conftest import MakeOffice
from tests.four_eyes import ANN, BOB, InboxWireChannel
from tests.runtime.test_required_approvals import approve, asked


def _config(cls: type) -> Any:
    return object() if cls is InboxWireChannel else None


async def test_the_view_says_who_approved_and_how_many_are_needed(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    assert office.app.assembly.roles_by_name["wire-approval-channel"].required_approvals == 2
    catalog = KitCatalog(office.app, _config)

    [ask] = office.inbox.asks
    fresh = question_view(ask, catalog, now=office.clock.now())
    assert fresh.approvals is not None
    assert fresh.approvals.lines() == ("Needs 2 approvals, each by a different person.",)

    await approve(office, pause_id, ANN)
    pause = await office.app.find_pause(pause_id, tenant_id="acme")
    assert pause is not None
    once = question_view(pause, catalog, now=office.clock.now())
    assert once.approvals is not None and once.approvals.still_needed == 1
    assert once.approvals.line() == f"Approved by {ANN} · 1 of 2 needed"
    assert f"  Approved by {ANN} · 1 of 2 needed" in question_lines(once)
    assert once.approvals.line(lambda who: f"<@{who}>") == f"Approved by <@{ANN}> · 1 of 2 needed"

    await approve(office, pause_id, BOB, override_arguments={"amount": 20000.0})
    pause = await office.app.find_pause(pause_id, tenant_id="acme")
    assert pause is not None
    edited = question_view(pause, catalog, now=office.clock.now())
    assert [(f.title, f.value) for f in edited.fields if f.key == "amount"] == [
        ("Amount", "20,000.00")
    ]
    lines = question_lines(edited)
    assert "  Amount: 25,000.00 → 20,000.00" in lines
    assert f"  Changed by {BOB}: earlier approvals no longer count" in lines
    assert f"  Approved by {BOB} · 1 of 2 needed" in lines

    await approve(office, pause_id, ANN)
    pause = await office.app.find_pause(pause_id, tenant_id="acme")
    assert pause is not None
    closed = question_view(pause, catalog, now=None)
    assert closed.approvals is None  # answered: the outcome names every approver that counted
    [said] = [line for line in outcome_lines(closed) if line.startswith("= ")]
    assert said.startswith(f"= Approved with changes by {BOB} and {ANN} · 2 of 2. ")


def test_several_approvers_are_named_in_one_sentence() -> None:
    words = words_of(Approved(by="cid", approvers=("ann", "bob", "cid"), required=3))
    assert words.sentence() == "Approved by ann, bob and cid · 3 of 3."
    assert words.credit(lambda who: f"<@{who}>") == " by <@ann>, <@bob> and <@cid> · 3 of 3"
    assert words_of(Approved(by="ann")).sentence() == "Approved by ann."  # one answer closes it


async def test_the_view_says_who_a_waiting_question_was_handed_to(
    make_office: MakeOffice,
) -> None:
    office, pause_id = await asked(make_office)
    await office.app.reassign(pause_id, tenant_id="acme", by=ANN, to="U0DAN")
    pause = await office.app.find_pause(pause_id, tenant_id="acme")
    assert pause is not None
    view = question_view(pause, KitCatalog(office.app, _config), now=None)
    assert [(h.by, h.to) for h in view.handed] == [(ANN, "U0DAN")]
    assert f"  Handed to U0DAN by {ANN}: they may answer it too" in question_lines(view)
