"""The office desk's settings, read before anything heavy loads: a bad one is told at once.

``COUNTERSIGN_APPROVAL_CHANNEL``, ``COUNTERSIGN_APPROVERS``, ``COUNTERSIGN_DESK_MODEL`` and
``COUNTERSIGN_DESK_AGENT`` (``bot.desk.slack`` builds the desk from them); the desk's model is
checked against the configured providers' model names without loading LangChain.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from bot.core.errors import SettingsError
from bot.models.provider import ModelProvider, serving_provider
from bot.served.targets import (
    GRAPH_SETTING,
    POLICY_SETTING,
    PROMPTS_SETTING,
    ServedSettings,
    graph_targets,
    policy_target,
    suggested_prompts,
)
from bot.settings import environment
from channels.slack.approver_ids import is_approver_id
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
    policy = policy_target(values.get(POLICY_SETTING, ""))
    if not slack:
        return ServedSettings(graphs=targets, prompts=prompts, policy=policy)
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
        graphs=targets,
        approval_channel=channel,
        approvers=approvers,
        prompts=prompts,
        policy=policy,
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
