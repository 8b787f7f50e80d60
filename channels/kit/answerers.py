"""Who may answer a question, by the rules every channel shares; the words of a refusal.

A CHANNEL question: its implementation's approvers (where a policy routed it, the route's
approvers instead), and once it is escalated its ``escalate_to`` people too (the first answer
from either side wins). A THREAD_OWNER question:
its owner. A channel says whether the person is among them (Slack expands user groups, the web
compares names) and the kit says what follows. The role's own rules (separation of duties) are
the runtime's, checked by ``App.answer`` before this one; :func:`refuses_requester` and
:func:`without_requester` say the same rule ahead of time, so that no surface lists, notifies
or mentions the requester for a question the runtime would refuse them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, assert_never

from bot.core.enums import PauseAnswerer
from bot.core.results import PauseView
from bot.core.routes import PauseRoute
from channels.kit.catalog import RoleConfig
from channels.kit.texts import NOT_AN_APPROVER, NOT_ESCALATED_YET, NOT_THE_OWNER

Among = Callable[[Sequence[str]], Awaitable[bool]]
"""Whether the person is among these approvers (user ids, groups, names: the channel's)."""


class SeparatesDuties(Protocol):
    """Whether a question of ``role`` (routed by ``route``) refuses its requester's answer
    (``KitCatalog.role_separates_duties``: the runtime's ``separates_duties``)."""

    def __call__(self, role: str, route: PauseRoute | None = None, /) -> bool: ...


class Asked(Protocol):
    """What a rule needs of a question: ``PendingPause``, ``PauseView``, a channel's ask."""

    @property
    def role(self) -> str: ...
    @property
    def owner_id(self) -> str | None: ...
    @property
    def route(self) -> PauseRoute | None: ...


def refuses_requester(question: Asked, person: str, separates: SeparatesDuties) -> bool:
    """Whether ``person`` asked for ``question`` and its role separates duties: every answer
    of theirs is refused (``pause.self-approval``), so no surface offers it to them as a
    question to answer (they may still see it as their own request)."""
    return (
        bool(question.owner_id)
        and person == question.owner_id
        and separates(question.role, question.route)
    )


def without_requester(
    people: Sequence[str], question: Asked, separates: SeparatesDuties
) -> tuple[str, ...]:
    """``people`` to notify of (or mention for) ``question``, without its requester where the
    role separates duties (:func:`refuses_requester`)."""
    return tuple(p for p in people if not refuses_requester(question, p, separates))


async def refusal(
    pause: PauseView, person: str, config: RoleConfig | None, *, among: Among
) -> str | None:
    """Why ``person`` may not answer ``pause`` (``None``: they may); ``config`` is the
    implementation the pause was asked through (None: not this channel's)."""
    if pause.answered_by is PauseAnswerer.CHANNEL and config is not None:
        approver = await among(approvers_of(pause, config))
        escalation = not approver and bool(config.escalate_to) and await among(config.escalate_to)
    else:
        approver = escalation = False
    return refusal_of(pause, person, config, approver=approver, escalation=escalation)


def refusal_of(
    pause: PauseView,
    person: str,
    config: RoleConfig | None,
    *,
    approver: bool,
    escalation: bool,
) -> str | None:
    """:func:`refusal` once the channel knows whether ``person`` is one of the ``approver``s
    and one of the ``escalation`` people of ``config``."""
    match pause.answered_by:
        case PauseAnswerer.THREAD_OWNER:
            return None if person == pause.owner_id else NOT_THE_OWNER
        case PauseAnswerer.CHANNEL:
            if config is None:
                return NOT_AN_APPROVER
            if approver:
                return None
            if escalation:  # the first answer from either side wins
                return None if pause.escalated else NOT_ESCALATED_YET
            return NOT_AN_APPROVER
        case _:
            assert_never(pause.answered_by)


def approvers_of(pause: PauseView, config: RoleConfig) -> tuple[str, ...]:
    """Who approves ``pause`` in ``config``'s channel: where a policy routed it
    (``PolicyOutcome.route(approvers=...)``), the route's approvers, else the channel's."""
    if pause.route is not None and pause.route.approvers:
        return pause.route.approvers
    return config.approvers


def asked(config: RoleConfig, owner_id: str) -> tuple[str, ...]:
    """Who a question is asked of: its approvers (a THREAD_OWNER role: its owner)."""
    if config.answered_by is PauseAnswerer.THREAD_OWNER:
        return (owner_id,)
    return config.approvers


def may_answer_now(config: RoleConfig, owner_id: str, *, escalated: bool) -> tuple[str, ...]:
    """Who may answer a question now: who it was asked of, and once escalated its
    ``escalate_to`` people too."""
    first = asked(config, owner_id)
    return tuple(dict.fromkeys((*first, *config.escalate_to))) if escalated else first
