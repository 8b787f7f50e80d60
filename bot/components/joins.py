"""How a parallel launch joins its branches: FailFast (default), all, or a quorum."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinFailFast:
    """Every branch must finish; the first failure cancels the launch (the default)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinAll:
    """Wait for every branch; failures are collected and the first is raised at the end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinQuorum:
    """Decided once ``max`` branches finished; the unfinished ones are cancelled or withdrawn.

    ``deadline`` (on the application's clock, from the launch's first pass) decides the quorum
    with what finished by then.
    """

    max: int
    deadline: timedelta | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinQuorumGroups:
    """Branches in named groups; decided when one group has ``max`` finished branches."""

    groups: Mapping[str, Sequence[int]]
    max: int
    deadline: timedelta | None = None


JoinPolicy = JoinFailFast | JoinAll | JoinQuorum | JoinQuorumGroups


def join_fail_fast() -> JoinFailFast:
    return JoinFailFast()


def join_all() -> JoinAll:
    return JoinAll()


def join_quorum(*, max: int, deadline: timedelta | None = None) -> JoinQuorum:
    if max < 1:
        raise ValueError("join_quorum(max=k) needs k >= 1")
    return JoinQuorum(max=max, deadline=deadline)


def join_quorum_groups(
    groups: Mapping[str, Sequence[int]], *, max: int, deadline: timedelta | None = None
) -> JoinQuorumGroups:
    """``groups`` maps a group's name to the indexes of its branches in the launch."""
    if max < 1:
        raise ValueError("join_quorum_groups(max=k) needs k >= 1")
    return JoinQuorumGroups(groups=dict(groups), max=max, deadline=deadline)


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinFailure:
    """What a join error handler gets: the original error and where the launch stood."""

    error: BaseException
    results: Mapping[str, str] = field(default_factory=dict)
    withdrawn: Sequence[str] = ()
    cancelled: Sequence[str] = ()


JoinErrorHandler = Callable[[JoinFailure], str | Awaitable[str]]


def matches(error: BaseException, error_class: type[BaseException]) -> bool:
    """True if ``error`` or any error in its cause chain is an ``error_class``."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, error_class):
            return True
        seen.add(id(current))
        current = current.__cause__
    return False
