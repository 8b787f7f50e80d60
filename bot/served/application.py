"""The application a served graph runs in: roles alone, made for the tools it asks about.

Each tool a graph asks about gets a role of its own whose model is the tool's own arguments
(LangChain's ``tool_call_schema``), so the approver is shown exactly what the tool takes and
an edit is checked by it; one role more per graph takes what it asks with
``request_approval`` about a tool it has no schema for (its arguments shown as they come).
Replies in words are read by the keyword interpreter. The roles are implemented by the
channels ``implement`` makes (Slack's or the web's), and nothing else is in the application:
no workflow, agent or model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from bot.app import App
from bot.components.decorators import application, channel_role, reply_interpreter
from bot.core.channel import ChannelOf
from bot.core.enums import DecidedBy, PauseAnswerer
from bot.langgraph import LangGraphAgent
from bot.runtime.graph_tools import schema_of
from bot.served.graphs import LoadedGraph, slug
from interpreters import KeywordReplyInterpreter

Implement = Callable[[type, str], type]
"""Makes the channel implementing a role: ``(role, name)`` → a ``@channel`` class."""


class ArgumentsAsAsked(BaseModel):
    """The arguments of a question about a tool the graph has no schema for: shown as they
    come (``request_approval``'s ``args``)."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphRoles:
    """A served graph and its roles: ``role`` for what it asks without a schema, ``roles``
    by tool name."""

    graph: LoadedGraph
    role: type
    roles: dict[str, type]

    def attach(self, app: App) -> LangGraphAgent:
        """Attach the graph to ``app`` under its roles; a graph without a checkpointer of its
        own is compiled with the App's (in its database, encrypted at rest)."""
        graph: Any = self.graph.graph
        if graph.checkpointer is None:
            graph = graph.copy({"checkpointer": app.checkpointer})
        return app.langgraph(
            self.graph.name,
            graph,
            role=self.role,
            tools=list(self.graph.asked),
            asked_tools=[t.name for t in self.graph.asked],
            roles=self.roles,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ServedApplication:
    """The application class to create the App with, and each graph's roles."""

    application: type
    graphs: tuple[GraphRoles, ...]

    def attach(self, app: App) -> tuple[LangGraphAgent, ...]:
        return tuple(each.attach(app) for each in self.graphs)


def served_application(
    graphs: Sequence[LoadedGraph],
    *,
    answered_by: PauseAnswerer,
    implement: Implement,
    name: str = "served-graphs",
    description: str = "Your own LangGraph agents, approved through Countersign",
    policy: type | None = None,
) -> ServedApplication:
    """The application of ``graphs``' roles, each implemented by ``implement``; ``policy`` (a
    ``@policy`` class) decides before each of their questions is sent, as on a role."""
    served: list[GraphRoles] = []
    channels: list[type] = []
    for graph in graphs:
        fallback = _role(graph, None, answered_by, policy=policy)
        roles = {
            tool.name: _role(graph, tool.name, answered_by, schema_of(tool), policy=policy)
            for tool in graph.asked
        }
        for role in (fallback, *roles.values()):
            channels.append(implement(role, _role_name(graph, _tool_of(role, roles))))
        served.append(GraphRoles(graph=graph, role=fallback, roles=roles))
    app_class = type("ServedGraphs", (), {"__doc__": description, "__module__": __name__})
    decorated = application(name=name, description=description, channels=channels)(app_class)
    return ServedApplication(application=decorated, graphs=tuple(served))


def _tool_of(role: type, roles: dict[str, type]) -> str | None:
    return next((tool for tool, each in roles.items() if each is role), None)


def _role_name(graph: LoadedGraph, tool: str | None) -> str:
    """``<graph>-<tool>-approval``, or ``<graph>-approval`` for its schemaless questions (a
    channel adds its own prefix and ``-channel``)."""
    return f"{graph.name}-{slug(tool)}-approval" if tool else f"{graph.name}-approval"


def _role(
    graph: LoadedGraph,
    tool: str | None,
    answered_by: PauseAnswerer,
    approves: type[BaseModel] = ArgumentsAsAsked,
    *,
    policy: type | None = None,
) -> type:
    """A role (and its keyword interpreter) for ``tool`` of ``graph``; named after both, so
    a restart makes the same names and the questions waiting find their role again."""
    base = _role_name(graph, tool)
    what = f"calls of {tool}" if tool else "what it asks"
    interpreter = reply_interpreter(
        name=f"{base}-reply-interpreter",
        description=f"Reads approve / reject[: reason] in a reply about {what}",
        decided_by=DecidedBy.CODE,
    )(type(f"{_pascal(base)}Replies", (KeywordReplyInterpreter,), {"__module__": __name__}))
    described = f"Approves {what} of {graph.name}"
    role_class = type(_pascal(base), (ChannelOf,), {"__module__": __name__, "__doc__": described})
    return channel_role(
        name=f"{base}-channel",
        description=described,
        approves=approves,
        answered_by=answered_by,
        reply_interpreter=interpreter,
        policy=policy,
    )(role_class)


def _pascal(text: str) -> str:
    return "".join(part.capitalize() for part in text.split("-")) or "Served"
