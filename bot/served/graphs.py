"""``COUNTERSIGN_GRAPH``'s graphs, imported and checked: each problem one line naming it.

A target is a compiled LangGraph graph (``create_agent(...)``, ``builder.compile()``) or a
function returning one. It must ask something Countersign can put to a person: LangChain's
``HumanInTheLoopMiddleware`` (its ``interrupt_on`` tools), or nodes that call
``bot.langgraph.request_approval(...)``. A node that calls LangGraph's ``interrupt()`` with a
value of its own, and static breakpoints (``interrupt_before`` / ``interrupt_after``), ask
nothing Countersign can read: such a graph is refused, saying what is supported.
"""

from __future__ import annotations

import importlib
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from langchain_core.tools import BaseTool
from langgraph.pregel import Pregel

from bot.core.errors import SettingsError
from bot.runtime.graph_tools import interrupting_tools, subgraphs, tools_of
from bot.served.targets import GRAPH_SETTING, GraphTarget

ASKING: Final = "request_approval"
BARE: Final = "interrupt"
SUPPORTED: Final = (
    "Countersign asks what LangChain's HumanInTheLoopMiddleware requests (create_agent(..., "
    "middleware=[HumanInTheLoopMiddleware(interrupt_on={...})])) and what a node asks with "
    "bot.langgraph.request_approval(tool, args)"
)
_MAX_DEPTH: Final = 3
_LIBRARIES: Final = ("langchain", "langgraph", "bot.")


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedGraph:
    """A graph to serve: its name (for its records and roles), the graph, and the tools it
    asks about with their own schemas (none known for a graph that asks with
    ``request_approval``: its questions are shown and checked as they come)."""

    name: str
    target: str
    graph: Pregel[Any, Any, Any, Any]
    asked: tuple[BaseTool, ...]


def load_graphs(targets: tuple[GraphTarget, ...]) -> tuple[LoadedGraph, ...]:
    """Every target loaded and checked, named apart (``graph_names``)."""
    names = graph_names(targets)
    return tuple(load_graph(t, name=names[t]) for t in targets)


def graph_names(targets: tuple[GraphTarget, ...]) -> dict[GraphTarget, str]:
    """A name per target: its module's last part, or with the attribute where two share it
    (``agents-refunds``); lower-case letters, digits and dashes."""
    short = {t: slug(t.module.rsplit(".", 1)[-1]) for t in targets}
    taken = list(short.values())
    return {
        t: name if taken.count(name) == 1 else f"{name}-{slug(t.attribute)}"
        for t, name in short.items()
    }


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "graph"


def load_graph(target: GraphTarget, *, name: str) -> LoadedGraph:
    """Import ``target``, make its graph and check that it asks something; a ``SettingsError``
    naming ``COUNTERSIGN_GRAPH`` otherwise."""
    found = getattr(_module(target), target.attribute.split(".")[0], _MISSING)
    for part in target.attribute.split(".")[1:]:
        found = getattr(found, part, _MISSING)
    if found is _MISSING:
        raise SettingsError(
            f"{GRAPH_SETTING}: the module {target.module} has no {target.attribute!r} (name a "
            "compiled graph, or a function returning one)"
        )
    graph = _made(target, found)
    return checked_graph(graph, name=name, shown=target.text)


def checked_graph(
    graph: Pregel[Any, Any, Any, Any], *, name: str, shown: str, setting: str = GRAPH_SETTING
) -> LoadedGraph:
    """``graph`` checked (it asks something Countersign can put to a person); a
    ``SettingsError`` naming ``setting`` otherwise."""
    try:
        asked = _asked(shown, graph)
    except SettingsError as error:
        raise SettingsError(setting + error.message.removeprefix(GRAPH_SETTING)) from None
    return LoadedGraph(name=name, target=shown, graph=graph, asked=asked)


_MISSING: Final = object()


def _module(target: GraphTarget) -> types.ModuleType:
    try:
        return importlib.import_module(target.module)
    except ImportError as error:
        missing = error.name if isinstance(error, ModuleNotFoundError) else None
        if missing is not None and (target.module + ".").startswith(f"{missing}."):
            raise SettingsError(
                f"{GRAPH_SETTING}: the module {target.module} cannot be imported (no module "
                f"named {missing!r}): run from the folder that holds it, or add that folder to "
                "PYTHONPATH"
            ) from None
        raise SettingsError(_failed(f"importing the module {target.module}", error)) from None
    except Exception as error:  # the user's module raised while it was imported
        raise SettingsError(_failed(f"importing the module {target.module}", error)) from None


def _made(target: GraphTarget, found: object) -> Pregel[Any, Any, Any, Any]:
    """The compiled graph ``found`` is, or the one it returns when called."""
    if not isinstance(found, Pregel) and callable(found) and not isinstance(found, type):
        try:
            found = found()
        except Exception as error:
            raise SettingsError(_failed(f"calling {target.text}()", error)) from None
    if isinstance(found, Pregel):
        return found
    kind = type(found).__name__
    hint = " (compile it: builder.compile())" if hasattr(found, "compile") else ""
    raise SettingsError(
        f"{GRAPH_SETTING}: {target.text} is not a compiled LangGraph graph, nor a function "
        f"returning one: it is a {kind}{hint}"
    )


def _failed(what: str, error: BaseException) -> str:
    reason = " ".join(str(error).split()) or type(error).__name__
    return f"{GRAPH_SETTING}: {what} failed: {type(error).__name__}: {reason}"[:600]


def _asked(shown: str, graph: Pregel[Any, Any, Any, Any]) -> tuple[BaseTool, ...]:
    """The tools the graph asks about (its middleware's ``interrupt_on``, with schemas); a
    graph that asks nothing Countersign can read is refused."""
    breakpoints = [*_listed(graph.interrupt_before_nodes), *_listed(graph.interrupt_after_nodes)]
    if breakpoints:
        raise SettingsError(
            f"{GRAPH_SETTING}: {shown} stops at breakpoints (interrupt_before / "
            f"interrupt_after: {', '.join(breakpoints)}), which ask nobody anything: {SUPPORTED}"
        )
    interrupting = interrupting_tools(graph)
    names = set(_names_in_nodes(graph))
    if interrupting:
        return tuple(t for t in tools_of(graph) if t.name in interrupting)
    if ASKING in names:
        return ()
    if interrupting is not None:
        raise SettingsError(
            f"{GRAPH_SETTING}: {shown} has nothing to approve: its "
            "HumanInTheLoopMiddleware's interrupt_on names no tool"
        )
    if BARE in names:
        raise SettingsError(
            f"{GRAPH_SETTING}: {shown} calls LangGraph's interrupt() with a value of its "
            f"own, which Countersign cannot put to a person: {SUPPORTED}"
        )
    raise SettingsError(
        f"{GRAPH_SETTING}: {shown} has nothing to approve (no HumanInTheLoopMiddleware "
        f"with interrupt_on, no node asking): {SUPPORTED}"
    )


def _listed(nodes: object) -> list[str]:
    if nodes == "*":
        return ["every node"]
    return [str(n) for n in nodes] if isinstance(nodes, list | tuple) else []


def _names_in_nodes(graph: Pregel[Any, Any, Any, Any]) -> Iterator[str]:
    """The global and attribute names the graph's node functions use (and the functions of
    their own module that they call, a few calls deep)."""
    seen: set[int] = set()
    for each in subgraphs(graph):
        for node in getattr(each, "nodes", {}).values():
            bound = getattr(node, "bound", None)
            for function in (getattr(bound, "func", None), getattr(bound, "afunc", None)):
                if isinstance(function, types.FunctionType | types.MethodType):
                    inner = _function_of(function)
                    if not inner.__module__.startswith(_LIBRARIES):  # your code only
                        yield from _names_of(inner, seen, depth=0)


def _function_of(function: Callable[..., Any]) -> types.FunctionType:
    inner = getattr(function, "__func__", function)
    assert isinstance(inner, types.FunctionType)
    return inner


def _names_of(function: types.FunctionType, seen: set[int], *, depth: int) -> Iterator[str]:
    if id(function) in seen or depth > _MAX_DEPTH:
        return
    seen.add(id(function))
    for name in _code_names(function.__code__):
        yield name
        called = function.__globals__.get(name)
        if isinstance(called, types.FunctionType) and called.__module__ == function.__module__:
            yield from _names_of(called, seen, depth=depth + 1)


def _code_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):  # a nested function or a comprehension
            yield from _code_names(constant)
