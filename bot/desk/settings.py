"""The office desk's settings, read before anything heavy loads: a bad one is told at once.

``COUNTERSIGN_APPROVAL_CHANNEL``, ``COUNTERSIGN_APPROVERS``, ``COUNTERSIGN_DESK_MODEL`` and
``COUNTERSIGN_DESK_AGENT`` (``bot.desk.slack`` builds the desk from them); the desk's model is
checked against the configured providers' model names without loading LangChain.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from bot.core.errors import SettingsError
from bot.models.provider import ModelProvider, serving_provider
from bot.settings import environment
from channels.slack.approvers import is_approver_id
from channels.slack.conversation_ids import is_conversation_id

OFFLINE_MODEL: Final = "offline"
"""The model name that stands for the demo's scripted model in ``COUNTERSIGN_DESK_MODEL``."""
DEFAULT_DESK_MODEL: Final = "moonshotai/kimi-k2.6"


DESK_AGENTS: Final = ("native", "langgraph")
"""``COUNTERSIGN_DESK_AGENT``: the desk's own agent, or a LangChain agent attached to it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeskSettings:
    approval_channel: str
    approvers: tuple[str, ...]
    model: str
    agent: str = "native"


def load_desk_settings(
    environ: Mapping[str, str] | None = None, *, env_file: str | None = ".env"
) -> DeskSettings:
    """The desk's settings; each missing or malformed one is one ``SettingsError`` line."""
    values = environment(environ, env_file=env_file)
    channel = values.get("COUNTERSIGN_APPROVAL_CHANNEL", "").strip()
    if not channel:
        raise SettingsError(
            "COUNTERSIGN_APPROVAL_CHANNEL is missing: the id of the Slack channel where the "
            "desk asks for approvals (C…; the channel's details show it), invite the bot there"
        )
    if not is_conversation_id(channel):  # the rule slack_channel applies: one for both
        raise SettingsError(
            f"COUNTERSIGN_APPROVAL_CHANNEL is malformed: a channel id such as C0123456789, "
            f"not {channel!r}"
        )
    approvers = _approvers(values)
    model = values.get("COUNTERSIGN_DESK_MODEL", "").strip() or DEFAULT_DESK_MODEL
    agent = values.get("COUNTERSIGN_DESK_AGENT", "").strip().lower() or "native"
    if agent not in DESK_AGENTS:
        raise SettingsError(
            f"COUNTERSIGN_DESK_AGENT is malformed: {' or '.join(DESK_AGENTS)}, not {agent!r}"
        )
    if agent == "langgraph" and importlib.util.find_spec("langchain") is None:
        raise SettingsError(
            "COUNTERSIGN_DESK_AGENT=langgraph needs LangChain (create_agent and its "
            "HumanInTheLoopMiddleware): pip install 'countersign[langchain]'"
        )
    return DeskSettings(approval_channel=channel, approvers=approvers, model=model, agent=agent)


def check_desk_model(settings: DeskSettings, providers: list[ModelProvider]) -> None:
    """One clear line when no configured provider serves the desk's model."""
    if settings.model == OFFLINE_MODEL:
        return
    if serving_provider(settings.model, providers) is None:
        raise SettingsError(
            f"COUNTERSIGN_MODEL_NAMES: no model provider serves the desk's model "
            f"{settings.model!r}: set COUNTERSIGN_MODEL_BASE_URL, COUNTERSIGN_MODEL_API_KEY and "
            "COUNTERSIGN_MODEL_NAMES (or COUNTERSIGN_DESK_MODEL to a model they serve, or to "
            f"{OFFLINE_MODEL} for the scripted demo model)"
        )


# ------------------------------------------------------------------------------- served graphs

GRAPH_SETTING: Final = "COUNTERSIGN_GRAPH"
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


def load_served_settings(
    environ: Mapping[str, str] | None = None, *, env_file: str | None = ".env", slack: bool
) -> ServedSettings | None:
    """The served graphs' settings; None when ``COUNTERSIGN_GRAPH`` is not set. ``slack``:
    read the Slack approval settings too (the web desk's approver is its one person)."""
    values = environment(environ, env_file=env_file)
    text = values.get(GRAPH_SETTING, "").strip()
    if not text:
        return None
    targets = graph_targets(text)
    if values.get("COUNTERSIGN_APP", "").strip():
        raise SettingsError(
            f"{GRAPH_SETTING} and COUNTERSIGN_APP are both set: serve your graphs, or your "
            "application (attach its graphs in code with App.langgraph), not both"
        )
    prompts = suggested_prompts(values.get(PROMPTS_SETTING, ""))
    if not slack:
        return ServedSettings(graphs=targets, prompts=prompts)
    approvers = _approvers(values)
    channel = values.get("COUNTERSIGN_APPROVAL_CHANNEL", "").strip() or None
    if channel is None and approvers:
        raise SettingsError(
            "COUNTERSIGN_APPROVAL_CHANNEL is missing: COUNTERSIGN_APPROVERS answer in a Slack "
            "channel; set its id (C…; the channel's details show it) and invite the bot there"
        )
    if channel is not None and not is_conversation_id(channel):
        raise SettingsError(
            f"COUNTERSIGN_APPROVAL_CHANNEL is malformed: a channel id such as C0123456789, "
            f"not {channel!r}"
        )
    return ServedSettings(
        graphs=targets, approval_channel=channel, approvers=approvers, prompts=prompts
    )


def _approvers(values: Mapping[str, str]) -> tuple[str, ...]:
    approvers = tuple(
        a.strip() for a in values.get("COUNTERSIGN_APPROVERS", "").split(",") if a.strip()
    )
    wrong = [a for a in approvers if not is_approver_id(a)]
    if wrong:
        raise SettingsError(
            f"COUNTERSIGN_APPROVERS is malformed: Slack user ids (U…) or user-group ids (S…), "
            f"comma-separated, not {', '.join(wrong)}"
        )
    return approvers
