"""What the channel conformance suite asks of a channel: a driver that works it from outside,
as the people on it do, and says which capabilities the channel has.

Modelled on langgraph's checkpoint conformance package: every channel runs the one suite
(``tests.conformance.suite``) with its own driver; a test of a capability the driver does not
declare is skipped with the reason the driver gives (the terminal has no separate approvers);
a test the channel fails today is marked in the driver's ``differences`` (strict xfail), so
a fix shows as an unexpected pass and the mark is dropped.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol


class Capability(enum.Enum):
    """What a channel may or may not do; the suite skips a test whose capability is missing."""

    APPROVERS = "approvers"
    """Someone other than the requester answers (a CHANNEL role with approvers)."""
    SEPARATION_OF_DUTIES = "separation_of_duties"
    """The requester is an approver and is refused on their own request."""
    RESPOND = "respond"
    """An answer given in place of the tool's result, where the asker takes one."""
    LIMITED_OFFERS = "limited_offers"
    """A question that takes only some kinds of answer offers only those."""
    REMIND = "remind"
    ESCALATE = "escalate"
    EXPIRE = "expire"
    WITHDRAW = "withdraw"
    WAITING_LIST = "waiting_list"
    """A person can list what waits for them (Slack's /pending, the web's inbox)."""


class Kind(enum.Enum):
    """The kinds of answer a question may offer (``ToolCallApprovalAsk.allows_kind``)."""

    APPROVE = "approve"
    EDIT = "edit"
    REJECT = "reject"
    RESPOND = "respond"


class Scenario(enum.Enum):
    """The questions the suite asks; each driver maps them onto its office's tools."""

    REFUND = "refund"
    """An approval by the channel's approvers of a refund of ``{"order_id", "amount"}`` whose
    customer e-mail (``SECRET``) is ``Sensitive``; a rejection needs its reason where the
    channel has approvers."""
    LARGE_REFUND = "large_refund"
    """The REFUND of ``1234.5``: an amount a channel may show grouped (``1,234.50``)."""
    OWN_REQUEST = "own_request"
    """A question with separation of duties, asked for by one of its approvers
    (``Asked.approver``); ``People.second_approver`` may approve it."""
    OWNERS = "owners"
    """A question only its thread's owner (``People.requester``) may answer."""
    TIMED = "timed"
    """A question reminded after 1 h (then every 2 h), escalated at 4 h, expired at 24 h."""
    GRAPH = "graph"
    """An attached LangChain agent's refund of ``{"order_id": "7", "amount": 40}``, taking the
    kinds given to ``ask``."""
    GRAPH_WITH_SECRET = "graph_with_secret"
    """The attached agent's refund with the ``Sensitive`` e-mail in its call, asked with the
    middleware's own description (which repeats the call's arguments)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class People:
    """Who the suite acts as, in the channel's own ids."""

    requester: str
    """Who starts the work (the thread's owner)."""
    stranger: str
    """Who may answer nothing."""
    second_approver: str | None = None
    """Another approver of OWN_REQUEST, who may approve what ``requester`` asked for."""
    escalated_to: str | None = None
    """Who may answer a TIMED question once it is escalated, and not before."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """One answer, as a person gives it on the channel."""

    kind: Kind
    reason: str | None = None
    arguments: Mapping[str, str] | None = None
    """An edit's changed arguments, typed as a person types them."""
    response: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """What a person reads of a question (or of what became of it)."""

    title: str
    """The question's heading (what a person reads first)."""
    text: str
    """Every word shown, as one text."""
    fields: Mapping[str, str] = field(default_factory=dict)
    """The arguments as shown: title → value."""
    offered: frozenset[Kind] = frozenset()
    """The kinds of answer offered now (none once it is closed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Told:
    """What became of an answer, as the person who gave it learns it."""

    taken: bool
    text: str
    """What they were told (a refusal's words; empty where nothing is said)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Waiting:
    """A person's list of what waits for them."""

    count: int
    """How many questions it lists."""
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Asked:
    """A question the suite asked: its pause (kept by the driver, never shown)."""

    scenario: Scenario
    pause_id: str
    thread_id: str
    execution_id: str
    tool: str
    approver: str
    """Who the question is asked of (an approver of its role; a THREAD_OWNER's: its owner)."""


class ChannelDriver(Protocol):
    """One channel, worked from outside. Everything is as a person does it on that channel
    (signed Slack requests, HTTP on the web, the terminal's stream and ``App.answer``); only
    ``runs``, ``agent_read`` and ``audit`` look behind it, at what the tool and agent did."""

    name: ClassVar[str]
    capabilities: ClassVar[frozenset[Capability]]
    missing: ClassVar[Mapping[Capability, str]]
    """Why each missing capability is missing (the skip reason)."""
    people: ClassVar[People]

    async def ask(
        self,
        scenario: Scenario,
        *,
        allowed: Sequence[Kind] = (Kind.APPROVE, Kind.EDIT, Kind.REJECT),
        final: str = "all done",
    ) -> Asked:
        """Start the work until the question is shown; ``final``: what the agent says after."""
        ...

    async def shown(self, asked: Asked, *, to: str | None = None) -> Shown:
        """What ``to`` (``asked.approver`` by default) reads of the question now."""
        ...

    async def answer(self, asked: Asked, answer: Answer, *, by: str) -> Told:
        """Answer as ``by``, the way the channel gives ``answer.kind`` (forced where the
        question does not offer it, as a forged request would)."""
        ...

    async def reply(self, asked: Asked, words: str, *, by: str) -> Told:
        """Answer in words, where the channel takes them (Slack: in the message's thread; the
        web: the page's free-text box; the terminal: the line typed at the prompt)."""
        ...

    async def waiting_for(self, person: str) -> Waiting:
        """What ``person``'s list of waiting questions shows."""
        ...

    async def withdraw(self, asked: Asked) -> None:
        """The question is no longer needed (as when a sibling failed or a quorum was
        reached): closed, and its channel told."""
        ...

    async def cancel(self, asked: Asked) -> None:
        """The work is stopped: its thread is cancelled (``App.cancel``)."""
        ...

    async def advance(self, asked: Asked, hours: int) -> list[str]:
        """Let ``hours`` pass on the App's clock; every text the channel said meanwhile."""
        ...

    def runs(self) -> list[dict[str, object]]:
        """Every run of the question's tool, with what it ran with."""
        ...

    def agent_read(self) -> list[str]:
        """What the agent read back for its tool calls (the tool messages)."""
        ...

    async def audit(self, asked: Asked) -> str:
        """The execution's audit record, as JSON."""
        ...

    def everything_said(self) -> str:
        """Every text the channel sent or showed during the test."""
        ...
