"""One question view: what a person reads about a question, built once from the pause and
rendered by each channel (Slack's Block Kit, the web page and inbox, the terminal's lines).

- a title that reads as a question: the tool's ``question=`` template, else its role's, filled
  with the values as shown ("Refund 1,234.50 to the card of order A-1001?"); else the first
  line of the description; never the tool's id;
- who asked, through which agent, what they asked (``ToolCallApprovalAsk.request``) and the
  agent's stated reason (``.stated_reason``), masked when they were kept;
- the fields titled and formatted by one set of rules (``channels.kit.values``), sensitive
  values masked; a value shown can be typed back into an edit;
- when it was asked and when it expires, with the time zone, and the time left;
- after an answer: who answered and how (``channels.kit.outcomes``), what an edit changed
  (was → now) and what ran (the arguments the tool ran with, masked).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, assert_never

from pydantic import BaseModel

from bot.core.channel import ChannelAsk
from bot.core.delegations import Handover
from bot.core.dtos import ToolCallApprovalAsk
from bot.core.enums import ExecutionStatus, PauseStatus
from bot.core.results import ExecutionResult, PauseView, PendingPause
from bot.core.sensitive import mask_arguments, sensitive_fields
from bot.core.time_left import parse_instant, time_left_text
from channels.kit.approvals import ApprovalsShown, approvals_of, nobody_yet
from channels.kit.catalog import KitCatalog
from channels.kit.offers import Offered, offered
from channels.kit.outcomes import Approved, Outcome, OutcomeWords, outcome_of, words_of
from channels.kit.texts import tool_returned
from channels.kit.values import NONE_SHOWN, field_title, format_value, humanize

_NO_FIELD: Final = object()
NEW_HIDDEN: Final = "a new value (hidden)"
"""What an edit of a sensitive field shows as its new value."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ShownField:
    """One argument as a person reads it: its title and its value as text (masked)."""

    key: str
    title: str
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One argument an edit changed: its title, what was asked and what it became."""

    title: str
    was: str
    now: str


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionView:
    """A question as every channel shows it (see the module's list)."""

    title: str
    details: str
    """What the description says beyond the title, and what the asker says of this call."""
    role: str
    """Who answers, for a person: the role's description, else its name."""
    requester: str
    agent: str
    request: str
    stated_reason: str
    fields: tuple[ShownField, ...]
    offers: Offered
    """The answers it takes (while it waits)."""
    asked_at: datetime | None
    expires_at: datetime | None
    time_left: timedelta | None
    reminded: int = 0
    escalated: bool = False
    separates_duties: bool = False
    outcome: Outcome | None = None
    changes: tuple[Change, ...] = ()
    ran_with: tuple[ShownField, ...] = ()
    """What the tool ran with (an approval's arguments, edits applied), masked."""
    approvals: ApprovalsShown | None = None
    """Who approved and how many approvals are still needed (a question that needs several);
    while it waits, ``fields`` and ``changes`` show the standing proposal."""
    handed: tuple[Handover, ...] = ()
    """Who it was handed to while it waits (``channels.kit.approvals.handover_lines``)."""

    @property
    def words(self) -> OutcomeWords | None:
        """What is said of the outcome (None while it waits)."""
        return None if self.outcome is None else words_of(self.outcome)

    @property
    def waiting(self) -> bool:
        return self.outcome is None

    def context(self) -> str:
        """Why the agent asks, on one line: what was asked and the agent's own words."""
        parts = []
        if self.request:
            parts.append(f"Asked: “{' '.join(self.request.split())}”")
        if self.stated_reason:
            parts.append(f"The agent says: “{' '.join(self.stated_reason.split())}”")
        return " · ".join(parts)


def when(moment: datetime) -> str:
    """A moment for a person, with its time zone: ``2026-03-02 09:00 UTC``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def left(time_left: timedelta | None) -> str:
    """``3 h 20 min left``; empty when it never expires."""
    return "" if time_left is None else f"{time_left_text(time_left)} left"


def shown_fields(
    model: type[BaseModel] | None, arguments: Mapping[str, Any]
) -> tuple[ShownField, ...]:
    """The arguments as a person reads them: titled, formatted, sensitive ones masked."""
    masked = mask_arguments(model, arguments)
    return tuple(
        ShownField(key=key, title=field_title(model, key), value=format_value(model, key, value))
        for key, value in masked.items()
    )


def one_line(fields: Sequence[ShownField]) -> str:
    """The fields on one line: ``Order ID: A-1001 · Amount: 120.00``."""
    return " · ".join(f"{f.title}: {' '.join(f.value.split())}" for f in fields)


def question_title(
    template: str | None,
    *,
    model: type[BaseModel] | None,
    arguments: Mapping[str, Any],
    description: str,
    tool: str,
) -> str:
    """The question's title: ``template`` filled with the values as shown (masked); a template
    naming a field the question lacks (or malformed) falls back to the description's first
    line without its full stop, and that to "Approve <the tool's name in words>?"."""
    if template:
        filled = _filled(template, model, arguments)
        if filled:
            return filled
    lines = description.strip().splitlines()
    first = " ".join(lines[0].split()).removesuffix(".").strip() if lines else ""
    return first or f"Approve {humanize(tool.removesuffix('-tool')).lower()}?"


def _filled(template: str, model: type[BaseModel] | None, arguments: Mapping[str, Any]) -> str:
    masked = mask_arguments(model, arguments)
    shown = {key: format_value(model, key, value) for key, value in masked.items()}
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(template) if name]
        if any(name not in shown for name in names):
            return ""
        return " ".join(template.format_map(shown).split())
    except (ValueError, IndexError, KeyError, AttributeError):
        return ""


def changes_of(
    model: type[BaseModel] | None,
    asked: Mapping[str, Any],
    overrides: Mapping[str, Any] | None,
) -> tuple[Change, ...]:
    """What an edit changed, was → now, masked (a sensitive field says only that it changed)."""
    if not overrides:
        return ()
    was = mask_arguments(model, asked)
    now = mask_arguments(model, {**asked, **overrides})
    hidden = sensitive_fields(model)
    return tuple(
        Change(
            title=field_title(model, key),
            was=format_value(model, key, was[key]) if key in was else NONE_SHOWN,
            now=NEW_HIDDEN if key in hidden else format_value(model, key, now[key]),
        )
        for key, value in overrides.items()
        if asked.get(key, _NO_FIELD) != value and key in now
    )


Asked = PauseView | PendingPause | ChannelAsk
"""What a question view is built from: a pause read back, a list's entry, or a channel's ask."""


def question_view(
    pause: Asked,
    catalog: KitCatalog[Any] | None,
    *,
    now: datetime | None,
) -> QuestionView:
    """The view of ``pause``. ``catalog`` (None: a channel that does not read the assembly)
    gives the question template, the descriptions and the role's rules; ``now`` (the App's
    clock; None: unknown) the time left."""
    ask = pause.value if isinstance(pause, ChannelAsk) else pause.ask
    role, agent = pause.role, pause.agent
    model = _model(pause, catalog)
    description = (
        pause.tool_description
        if isinstance(pause, PauseView)
        else _described(catalog, ask, agent=agent, role=role)
    )
    title = title_of(ask, catalog, agent=agent, role=role, model=model, description=description)
    expires = _expiry(pause)
    outcome = outcome_of(pause) if isinstance(pause, PauseView) else None
    changes: tuple[Change, ...] = ()
    ran_with: tuple[ShownField, ...] = ()
    if isinstance(outcome, Approved):
        changes = changes_of(model, ask.arguments, outcome.overrides)
        ran_with = shown_fields(model, {**ask.arguments, **(outcome.overrides or {})})
    waiting = not isinstance(pause, PauseView) or pause.status is PauseStatus.PENDING
    proposed = pause.proposal if isinstance(pause, PauseView) and waiting else None
    if proposed is not None:  # an approver's edit stands: the others approve what it says
        changes = changes_of(model, ask.arguments, proposed)
    asked_at = None if isinstance(pause, ChannelAsk) else parse_instant(pause.asked_at)
    role_described = "" if catalog is None else catalog.role_description(role)
    return QuestionView(
        title=title,
        details=_details(description, title, ask.description),
        role=" ".join(role_described.split()) or role,
        requester=pause.owner_id or "",
        agent=agent,
        request=ask.request or "",
        stated_reason=ask.stated_reason or "",
        fields=shown_fields(model, ask.arguments if proposed is None else proposed),
        offers=offered(
            ask,
            tool_input=model,
            reads_replies=catalog is not None and catalog.role_reads_replies(role),
        ),
        asked_at=asked_at,
        expires_at=expires,
        time_left=None if expires is None or now is None or not waiting else expires - now,
        reminded=0 if isinstance(pause, ChannelAsk) else pause.reminded,
        escalated=False if isinstance(pause, ChannelAsk) else pause.escalated,
        separates_duties=catalog is not None and catalog.role_separates_duties(role, pause.route),
        outcome=outcome,
        changes=changes,
        ran_with=ran_with,
        approvals=_approvals(pause, catalog) if waiting else None,
        handed=pause.handovers if isinstance(pause, PauseView) and waiting else (),
    )


def title_of(
    ask: ToolCallApprovalAsk,
    catalog: KitCatalog[Any] | None,
    *,
    agent: str,
    role: str,
    model: type[BaseModel] | None = None,
    description: str | None = None,
) -> str:
    """The title of a question about ``ask`` (see :func:`question_title`), its template,
    description and model read from ``catalog`` unless given."""
    template = (
        None if catalog is None else catalog.question_template(ask.tool, agent=agent, role=role)
    )
    if model is None and catalog is not None:
        model = catalog.tool_input(ask.tool, agent=agent, role=role)
    if description is None:
        description = _described(catalog, ask, agent=agent, role=role)
    return question_title(
        template, model=model, arguments=ask.arguments, description=description, tool=ask.tool
    )


def _described(
    catalog: KitCatalog[Any] | None, ask: ToolCallApprovalAsk, *, agent: str, role: str
) -> str:
    return "" if catalog is None else catalog.tool_description(ask.tool, agent=agent, role=role)


def _model(pause: Asked, catalog: KitCatalog[Any] | None) -> type[BaseModel] | None:
    """The model the question is shown by: its own, else the catalog's for its tool."""
    if isinstance(pause, PendingPause):
        if catalog is None:
            return None
        return catalog.tool_input(pause.ask.tool, agent=pause.agent, role=pause.role)
    return pause.tool_input


def _approvals(pause: Asked, catalog: KitCatalog[Any] | None) -> ApprovalsShown | None:
    """Who approved a question that needs several approvals, and how many more."""
    if isinstance(pause, PauseView):
        return approvals_of(pause)
    return (
        None if catalog is None else nobody_yet(catalog.required_approvals(pause.role, pause.route))
    )


def _expiry(pause: Asked) -> datetime | None:
    if isinstance(pause, ChannelAsk):
        return pause.expires_at
    return parse_instant(pause.expires_at) if pause.expires_at else None


def _details(description: str, title: str, said: str | None) -> str:
    """What the title does not say: the description (its other lines, or all of it when the
    title is a template's), and the asker's words about this call."""
    lines = description.strip().splitlines()
    first = " ".join(lines[0].split()).removesuffix(".").strip() if lines else ""
    rest = "\n".join(lines[1:]).strip() if first == title else description.strip()
    said = asker_said(said)
    return "\n".join(part for part in (rest, said if said != rest else "") if part)


GENERIC_ASK: Final = "Tool execution requires approval"
"""How LangChain's ``HumanInTheLoopMiddleware`` describes every call by default (then the tool's
id and its raw arguments): nothing a person needs beside the question's own fields."""


def asker_said(description: str | None) -> str:
    """What the asker says about this call, for a person; its generic default says nothing."""
    said = (description or "").strip()
    return "" if said.startswith(GENERIC_ASK) else said


@dataclass(frozen=True, slots=True, kw_only=True)
class Ending:
    """How the run went on after the answer: its failure, or the agent's final message."""

    text: str
    failed: bool = False


def ending_of(result: ExecutionResult | None, *, tool_result: str | None = None) -> Ending | None:
    """How the run went on, for a person: its failure; else what the tool returned
    (``tool_result``) and the agent's final message once it completed; None while nothing is
    known yet (it still runs or waits, and the tool said nothing)."""
    ran = tool_returned(tool_result) if tool_result else ""
    status = None if result is None else result.status
    match status:
        case ExecutionStatus.FAILED:
            assert result is not None
            why = result.error.message if result.error is not None else "no reason was kept"
            return Ending(
                text=" ".join(p for p in (ran, f"The run failed: {why}") if p), failed=True
            )
        case ExecutionStatus.CANCELLED:
            return Ending(text=" ".join(p for p in (ran, "The run was cancelled.") if p))
        case ExecutionStatus.COMPLETED:
            assert result is not None
            said = _final_words(result.output)
            end = f"The agent answered: “{said}”" if said else "The run completed."
            return Ending(text=" ".join(p for p in (ran, end) if p))
        case ExecutionStatus.RUNNING | ExecutionStatus.PAUSED | None:
            return Ending(text=ran) if ran else None
        case _:
            assert_never(status)


def _final_words(output: object) -> str:
    """The agent's final message, when the output is text (``WorkflowFinishText``, a string)."""
    text = getattr(output, "text", output)
    return " ".join(text.split()) if isinstance(text, str) else ""
