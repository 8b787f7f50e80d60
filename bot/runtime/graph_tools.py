"""The tools of an attached graph, and which of them its role is asked about.

An attached graph's questions are shown to the approver, and their edits checked, by the
role's model (``approves=``), so the role's model must fit each tool the graph can ask about
under it (``bot.runtime.schema_fit``): the tools ``HumanInTheLoopMiddleware``'s
``interrupt_on`` names when the middleware is found in the compiled graph, else every tool of
its tool nodes — or the names given as ``asked_tools``. Each is bound within its graph (the
graph's name is part of the key), with its own schema as a second check of an edit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolNode
from pydantic import BaseModel, ConfigDict

from bot.components.specs import ChannelRoleSpec, ChannelSpec
from bot.core.errors import AssemblyViolation
from bot.runtime.assembly import ToolBinding, role_binding
from bot.runtime.schema_fit import fit_problems

FIT_RULE = (
    "a role's model fits a tool when the tool's argument names are exactly the model's fields, "
    "each field taking only values of a JSON type the argument takes"
)


class AnyArguments(BaseModel):
    """The arguments of a tool whose schema is unknown: any object."""

    model_config = ConfigDict(extra="allow")


def schema_of(tool: BaseTool) -> type[BaseModel]:
    """The arguments the model gives ``tool`` (LangChain's ``tool_call_schema``)."""
    schema = tool.tool_call_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema
    return AnyArguments


def arguments_schema(tool: BaseTool) -> Mapping[str, Any]:
    """The JSON schema of ``tool``'s arguments (a pydantic schema's, or the one it was given)."""
    schema = tool.tool_call_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return schema if isinstance(schema, Mapping) else {}


def subgraphs(graph: Any) -> list[Any]:
    """The graph and the subgraphs LangGraph finds in it (``get_subgraphs``: a compiled graph
    added as a node, an agent inside an agent)."""
    graphs = [graph]
    with contextlib.suppress(Exception):  # a graph-like object without subgraphs of its own
        graphs += [subgraph for _, subgraph in graph.get_subgraphs(recurse=True)]
    return graphs


def tool_nodes(graph: Any) -> list[ToolNode]:
    """The tool nodes of the graph (``create_agent``'s ``tools`` node) and of its subgraphs."""
    found: list[ToolNode] = []
    for each in subgraphs(graph):
        nodes = (getattr(node, "bound", None) for node in getattr(each, "nodes", {}).values())
        found += [node for node in nodes if isinstance(node, ToolNode) and node not in found]
    return found


def tools_of(graph: Any) -> list[BaseTool]:
    """The tools of the graph's tool nodes."""
    return [tool for node in tool_nodes(graph) for tool in node.tools_by_name.values()]


def interrupting_tools(graph: Any) -> frozenset[str] | None:
    """The tools the ``HumanInTheLoopMiddleware``s of a ``create_agent`` graph interrupt on
    (their ``interrupt_on``), read from the middleware nodes' bound hooks; None when the
    graph has no such middleware (or LangChain is not installed)."""
    try:
        from langchain.agents.middleware import HumanInTheLoopMiddleware
    except ImportError:  # pragma: no cover - LangChain is only needed for create_agent graphs
        return None
    names: set[str] = set()
    found = False
    for each in subgraphs(graph):
        for node in getattr(each, "nodes", {}).values():
            bound = getattr(node, "bound", None)
            for hook in (getattr(bound, "func", None), getattr(bound, "afunc", None)):
                owner = getattr(hook, "__self__", None)
                if isinstance(owner, HumanInTheLoopMiddleware):
                    found = True
                    names |= set(owner.interrupt_on)
    return frozenset(names) if found else None


def bind_graph_tools(
    graph_name: str,
    graph: Any,
    role: ChannelRoleSpec,
    channel: ChannelSpec,
    *,
    tools: Sequence[BaseTool],
    asked_tools: Sequence[str] | None,
    roles: Mapping[str, tuple[ChannelRoleSpec, ChannelSpec]] | None = None,
) -> tuple[dict[str, ToolBinding], list[AssemblyViolation]]:
    """The bindings of the tools the graph asks ``role`` about (``tools`` always among them;
    a tool named in ``roles`` under its own role), and what keeps any from being bound: a
    role's model that does not fit a tool (``[langgraph.role-fit]``), two different tools of
    one name (``[langgraph.tool-ambiguous]``)."""
    roles = roles or {}
    asked = frozenset(asked_tools) if asked_tools is not None else interrupting_tools(graph)
    if asked is not None:
        asked |= frozenset(roles)
    given = {tool.name for tool in tools}
    by_name: dict[str, list[BaseTool]] = {}
    for tool in [*tools_of(graph), *tools]:
        if asked is None or tool.name in asked or tool.name in given:
            same = by_name.setdefault(tool.name, [])
            if all(arguments_schema(other) != arguments_schema(tool) for other in same):
                same.append(tool)
    bindings: dict[str, ToolBinding] = {}
    problems: list[AssemblyViolation] = []
    for name, candidates in by_name.items():
        if len(candidates) > 1:
            problems.append(_ambiguous(graph_name, name))
            continue
        [tool] = candidates
        asked_role, asked_channel = roles.get(name, (role, channel))
        unfit = fit_problems(asked_role.approves, arguments_schema(tool))
        if unfit:
            problems.append(_unfit(graph_name, asked_role, tool, unfit))
            continue
        bindings[name] = role_binding(
            name,
            asked_role,
            asked_channel,
            description=tool.description,
            tool_schema=schema_of(tool),
        )
    return bindings, problems


def _ambiguous(graph_name: str, tool: str) -> AssemblyViolation:
    return AssemblyViolation(
        rule="langgraph.tool-ambiguous",
        component=graph_name,
        message=f"the graph has two different tools named {tool!r} (their arguments differ): "
        "a question about it could not say which one it asks about; rename one",
    )


def _unfit(
    graph_name: str, role: ChannelRoleSpec, tool: BaseTool, problems: list[str]
) -> AssemblyViolation:
    arguments = ", ".join(arguments_schema(tool).get("properties") or {}) or "none"
    return AssemblyViolation(
        rule="langgraph.role-fit",
        component=graph_name,
        message=f"the role {role.name} approves {role.approves.__name__}, which does not fit "
        f"the tool {tool.name} (its arguments: {arguments}): {'; '.join(problems)}. The "
        f"approver is shown and checked by the role's model: {FIT_RULE}. Attach the graph "
        "under a role whose model fits, or name the tools it asks about (asked_tools=[...])",
    )
