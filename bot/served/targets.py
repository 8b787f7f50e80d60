"""``COUNTERSIGN_GRAPH`` and the assistant pane's prompts, read: light, before anything heavy.

The values a served graph is made of; ``bot.desk.settings.load_served_settings`` reads them
from the environment with the Slack approval settings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from bot.core.errors import SettingsError

GRAPH_SETTING: Final = "COUNTERSIGN_GRAPH"
POLICY_SETTING: Final = "COUNTERSIGN_POLICY"
PROMPTS_SETTING: Final = "COUNTERSIGN_ASSISTANT_PROMPTS"
MAX_PROMPTS: Final = 4
"""Slack's assistant pane shows at most four suggested prompts."""
MAX_PROMPT_TITLE: Final = 75
MAX_PROMPT_MESSAGE: Final = 2000
_DOTTED: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphTarget:
    """One ``module:attr`` of ``COUNTERSIGN_GRAPH``: a compiled graph, or a function that
    returns one."""

    module: str
    attribute: str

    @property
    def text(self) -> str:
        return f"{self.module}:{self.attribute}"


@dataclass(frozen=True, slots=True, kw_only=True)
class SuggestedPrompt:
    """A prompt Slack's assistant pane suggests: its ``title``, and the ``message`` sent."""

    title: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ServedSettings:
    """What ``python -m bot serve`` (and ``python -m bot``) reads to serve graphs of your own.

    ``approval_channel`` and ``approvers`` are Slack's: without approvers, whoever asked
    approves, in their own thread; with them, the questions are asked in the approval channel.
    """

    graphs: tuple[GraphTarget, ...]
    approval_channel: str | None = None
    approvers: tuple[str, ...] = ()
    prompts: tuple[SuggestedPrompt, ...] = ()
    policy: GraphTarget | None = None
    """``COUNTERSIGN_POLICY``: the ``@policy`` class (``module:attr``) deciding before the
    graphs' questions are sent; None: every question is asked."""


def graph_targets(text: str) -> tuple[GraphTarget, ...]:
    """``COUNTERSIGN_GRAPH`` read: ``module:attr``, comma-separated (each once)."""
    targets: list[GraphTarget] = []
    for entry in (e.strip() for e in text.split(",")):
        module, colon, attribute = entry.partition(":")
        if not (colon and _DOTTED.fullmatch(module) and _DOTTED.fullmatch(attribute)):
            raise SettingsError(
                f"{GRAPH_SETTING} is malformed: module:attr (a compiled LangGraph graph, or a "
                f"function returning one), comma-separated, e.g. my_agent:graph, not {entry!r}"
            )
        target = GraphTarget(module=module, attribute=attribute)
        if target not in targets:
            targets.append(target)
    return tuple(targets)


def policy_target(text: str) -> GraphTarget | None:
    """``COUNTERSIGN_POLICY`` read: one ``module:attr`` (a ``@policy`` class), or None."""
    entry = text.strip()
    if not entry:
        return None
    module, colon, attribute = entry.partition(":")
    if not (colon and _DOTTED.fullmatch(module) and _DOTTED.fullmatch(attribute)):
        raise SettingsError(
            f"{POLICY_SETTING} is malformed: module:attr (a @policy class), e.g. "
            f"my_rules:RefundPolicy, not {entry!r}"
        )
    return GraphTarget(module=module, attribute=attribute)


def suggested_prompts(text: str) -> tuple[SuggestedPrompt, ...]:
    """``COUNTERSIGN_ASSISTANT_PROMPTS`` read: ``title=message`` pairs separated by ``|``."""
    pairs = [p.strip() for p in text.split("|") if p.strip()]
    prompts: list[SuggestedPrompt] = []
    for pair in pairs:
        title, equals, message = (part.strip() for part in pair.partition("="))
        if not (equals and title and message):
            raise SettingsError(
                f"{PROMPTS_SETTING} is malformed: title=message pairs separated by |, e.g. "
                f"'Refund an order=Refund order A-1001, it arrived broken', not {pair!r}"
            )
        if len(title) > MAX_PROMPT_TITLE or len(message) > MAX_PROMPT_MESSAGE:
            raise SettingsError(
                f"{PROMPTS_SETTING} is malformed: a title of at most {MAX_PROMPT_TITLE} "
                f"characters and a message of at most {MAX_PROMPT_MESSAGE}, not {title!r}"
            )
        prompts.append(SuggestedPrompt(title=title, message=message))
    if len(prompts) > MAX_PROMPTS:
        raise SettingsError(
            f"{PROMPTS_SETTING} is malformed: at most {MAX_PROMPTS} prompts (Slack shows "
            f"four), not {len(prompts)}"
        )
    return tuple(prompts)
