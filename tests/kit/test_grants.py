"""The kit's "Approve and allow similar": what a question offers (the role's scopes; a
THREAD_OWNER role's owner only for their own requests; the bound on the first numeric argument
that is not ``Sensitive``) and how a form is read (every bad value that field's error, nothing
given) — computed once, rendered by Slack and the web alike."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import BaseModel

from bot import ArgumentConstraint, GrantScope, PauseAnswerer, PauseStatus, Sensitive
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.results import PauseView
from channels.kit.grants import (
    BOUND_FIELD,
    HOURS_FIELD,
    SCOPE_FIELD,
    GrantProblems,
    GrantRequest,
    grant_offer,
    grant_request,
)

ALL = ("thread", "requester", "agent")


class Payout(BaseModel):
    secret_amount: Annotated[float, Sensitive()] = 1.0
    payee: str
    amount: float


def pause(
    *,
    answered_by: PauseAnswerer = PauseAnswerer.CHANNEL,
    allowed: tuple[str, ...] | None = None,
    arguments: dict[str, object] | None = None,
) -> PauseView:
    return PauseView(
        pause_id="p" * 32,
        tenant_id="acme",
        status=PauseStatus.PENDING,
        resolution=None,
        answered_by=answered_by,
        role="payout-approval-channel",
        channel="web-payout-approval-channel",
        agent="office-agent",
        ask=ToolCallApprovalAsk(
            tool="pay-out-tool",
            arguments=arguments or {"secret_amount": 5.0, "payee": "ann", "amount": 120},
            call_id="c1",
            allowed_decisions=allowed,
        ),
        tool_input=Payout,
        tool_description="Pays out",
        owner_id="U0ANN",
        thread_id="thread-1",
        execution_id="e1",
        responder=None,
        decision=None,
        asked_at="2026-03-01T12:00:00+00:00",
    )


def test_a_question_offers_its_role_s_scopes_and_a_bound_on_its_amount() -> None:
    offer = grant_offer(pause(), ALL, tool_input=Payout)
    assert offer is not None
    assert [(c.kind, c.label) for c in offer.choices] == [
        ("thread", "for this thread"),
        ("requester", "for requests of U0ANN"),
        ("agent", "for the agent office-agent"),
    ]
    # the sensitive number is never offered as a bound (its value would be shown)
    assert (offer.bound_field, offer.bound_title, offer.bound_default) == ("amount", "Amount", 120)


def test_no_offer_without_scopes_or_an_approval_and_an_owner_only_for_their_own() -> None:
    assert grant_offer(pause(), (), tool_input=Payout) is None
    assert grant_offer(pause(allowed=("reject",)), ALL, tool_input=Payout) is None
    owned = grant_offer(pause(answered_by=PauseAnswerer.THREAD_OWNER), ALL, tool_input=Payout)
    assert owned is not None and [c.kind for c in owned.choices] == ["requester"]
    assert (
        grant_offer(pause(answered_by=PauseAnswerer.THREAD_OWNER), ("thread",), tool_input=Payout)
        is None
    )


def test_a_form_becomes_the_grant_it_asks_for() -> None:
    offer = grant_offer(pause(), ALL, tool_input=Payout)
    assert offer is not None
    fields = {SCOPE_FIELD: "requester", HOURS_FIELD: "24", BOUND_FIELD: "1,500.50"}
    assert grant_request(offer, pause(), fields) == GrantRequest(
        scope=GrantScope(owner_id="U0ANN"),
        constraint=ArgumentConstraint(at_most={"amount": 1500.5}),
        expires_in=timedelta(hours=24),
    )
    # an agent's grant is bounded by the call's own amount when none is typed
    agent = grant_request(offer, pause(), {SCOPE_FIELD: "agent", BOUND_FIELD: ""})
    assert isinstance(agent, GrantRequest)
    assert agent.scope == GrantScope(agent="office-agent")
    assert agent.constraint == ArgumentConstraint(at_most={"amount": 120.0})
    assert agent.expires_in == timedelta(hours=8)  # the default
    # a thread's grant with no bound typed: none
    thread = grant_request(offer, pause(), {SCOPE_FIELD: "thread"})
    assert isinstance(thread, GrantRequest) and thread.constraint == ArgumentConstraint()


def test_every_bad_value_is_its_field_s_error() -> None:
    offer = grant_offer(pause(), ALL, tool_input=Payout)
    assert offer is not None
    bad = grant_request(
        offer, pause(), {SCOPE_FIELD: "everyone", HOURS_FIELD: "9999", BOUND_FIELD: "-1"}
    )
    assert isinstance(bad, GrantProblems)
    assert set(bad.errors) == {SCOPE_FIELD, HOURS_FIELD, BOUND_FIELD}
    nan = grant_request(offer, pause(), {SCOPE_FIELD: "agent", BOUND_FIELD: "nan"})
    assert isinstance(nan, GrantProblems) and set(nan.errors) == {BOUND_FIELD}
