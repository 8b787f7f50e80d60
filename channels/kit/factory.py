"""The factory every channel's ``<channel>_channel(Role, ...)`` is: one class per role
implementation, carrying its approvers, its escalation and the channel's own configuration.

```python
def email_channel(role, *, name, approvers=(), escalate_to=()) -> type[EmailChannel]:
    people = role_people(role, approvers=approvers, escalate_to=escalate_to,
                         rules=EMAIL_PEOPLE, channel="email_channel", name=name)
    config = EmailConfig(role=people.role.name, answered_by=people.answered_by,
                         approvers=people.approvers, escalate_to=people.escalate_to)
    return implement_role(role, name=name, base=EmailChannel, config=config,
                          attribute=EMAIL_CONFIG, label="by e-mail", deps=[Mailer])
```

``role_people`` checks what every channel checks (the role is a ``@channel_role``; a CHANNEL
role names an approver, a THREAD_OWNER role none and no ``escalate_to``; each id as the
channel's ``PeopleRules`` say); ``implement_role`` makes the class (``@channel``) with the
config under the channel's attribute (``KitCatalog`` finds it there). Misuse raises
``SetupError`` at once, naming the factory and the implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from bot.components.decorators import channel
from bot.components.specs import ChannelRoleSpec, spec_of
from bot.core.enums import PauseAnswerer
from bot.core.errors import SetupError

B = TypeVar("B", bound=type)


@dataclass(frozen=True, slots=True, kw_only=True)
class PeopleRules:
    """How a channel names people: which ids are valid, and how the error describes them."""

    valid: Callable[[str], bool]
    described: str
    """What a valid id is, for the error: "Slack user ids (U…, W…) or user-group ids (S…)"."""
    one_of: str = "one approver"
    """How one approver is named in "name at least one approver (…)"."""
    noun: str = "ids"
    """What the ids are called in "approvers is a list of ids, not one string"."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RolePeople:
    """Who answers a role's questions in one implementation, checked."""

    role: ChannelRoleSpec
    answered_by: PauseAnswerer
    approvers: tuple[str, ...]
    escalate_to: tuple[str, ...]


def role_spec(role: type, *, channel: str) -> ChannelRoleSpec:
    """``role``'s spec, refused unless it is a ``@channel_role`` with a valid ``answered_by``."""
    spec = spec_of(role)
    if not isinstance(spec, ChannelRoleSpec):
        raise SetupError(f"{channel}: {getattr(role, '__name__', role)!s} is not a @channel_role")
    if not isinstance(spec.answered_by, PauseAnswerer):
        raise SetupError(f"{channel}: the role {spec.name} has no valid answered_by")
    return spec


def role_people(
    role: type,
    *,
    approvers: Sequence[str],
    escalate_to: Sequence[str],
    rules: PeopleRules,
    channel: str,
    name: str,
) -> RolePeople:
    """The role and who answers it, checked as every channel checks them."""
    spec = role_spec(role, channel=channel)
    where = f"{channel} {name}"
    people = _ids(approvers, "approvers", rules, where)
    if listed(escalate_to, "escalate_to", where, noun=rules.noun) and (
        spec.answered_by is not PauseAnswerer.CHANNEL
    ):
        raise SetupError(
            f"{where}: its role is answered by the thread's owner: nobody else may answer it, "
            "leave escalate_to out"
        )
    escalation = _ids(escalate_to, "escalate_to", rules, where)
    if spec.answered_by is PauseAnswerer.CHANNEL and not people:
        raise SetupError(
            f"{where}: its role is answered through the channel: name at least {rules.one_of}"
        )
    if spec.answered_by is PauseAnswerer.THREAD_OWNER and people:
        raise SetupError(
            f"{where}: its role is answered by the thread's owner: approvers would be ignored, "
            "leave them out"
        )
    return RolePeople(
        role=spec, answered_by=spec.answered_by, approvers=people, escalate_to=escalation
    )


def listed(ids: Sequence[str], what: str, where: str, *, noun: str = "ids") -> list[str]:
    """``ids`` as a list, refused when it is one string (a common slip)."""
    if isinstance(ids, str):
        raise SetupError(f"{where}: {what} is a list of {noun}, not one string")
    return list(ids)


def _ids(ids: Sequence[str], what: str, rules: PeopleRules, where: str) -> tuple[str, ...]:
    wrong = [i for i in listed(ids, what, where, noun=rules.noun) if not rules.valid(i)]
    if wrong:
        raise SetupError(f"{where}: {what} are {rules.described}, got {wrong!r}")
    return tuple(dict.fromkeys(ids))


def implement_role(
    role: type,
    *,
    name: str,
    base: B,
    config: object,
    attribute: str,
    also_as: str,
    label: str,
    deps: Sequence[type],
    escalates: bool,
    description: str | None = None,
    prefix: str,
) -> B:
    """A new class ``<prefix><Role>`` implementing ``role`` as ``base`` does, decorated with
    ``@channel(name=name)``; ``config`` is under ``attribute`` (where ``KitCatalog`` finds it)
    and ``also_as`` (the name ``base`` reads it by: ``cls.slack``, ``cls.web``)."""
    spec = role_spec(role, channel=f"{prefix.lower()}_channel")
    namespace = {
        attribute: config,
        also_as: config,
        "implementation_name": name,
        "escalates": escalates,
        "__module__": role.__module__,
        "__doc__": f"Asks {spec.name} {label}.",
    }
    cls = type(f"{prefix}{role.__name__}", (base, role), namespace)
    decorate = channel(
        name=name,
        description=description or f"Asks {label}: {spec.description}",
        deps=list(deps),
    )
    made: B = decorate(cls)  # type: ignore[assignment]  # type() of base and role is a base
    return made
