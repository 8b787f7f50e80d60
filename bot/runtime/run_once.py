"""At most once: what a tool's earlier run, recorded before it ran, says about running it now.

Our own approved tools (``bot.runtime.tool_calls``: the pause taken, then the tool's result saved
on it) and an attached graph's tools (``bot.runtime.attached_tools``: ``cs_tool_runs``) keep the
same two marks — the run started, its result saved — and read them here, the one place the rule
is written: a saved result is given back without running; a run that started and saved nothing
(the process stopped while the tool ran) is not run again, and the model is told so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunNow:
    """No earlier run: this one recorded the start, the tool runs now."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GiveBack(Generic[T]):
    """An earlier run saved ``result``: give it back, never run again."""

    result: T


@dataclass(frozen=True, slots=True, kw_only=True)
class MayHaveRun:
    """An earlier run started and saved nothing: it may have run; never run it twice."""


def earlier_run(*, first_start: bool, saved: T | None) -> RunNow | GiveBack[T] | MayHaveRun:
    """What to do with a tool call whose start was recorded (``first_start``: by this run)."""
    if saved is not None:
        return GiveBack(result=saved)
    return RunNow() if first_start else MayHaveRun()


def may_have_run(tool: str) -> str:
    """The tool error the model reads for a call that may have run (``MayHaveRun``)."""
    return (
        f"the call to {tool} may or may not have run (the process stopped while it ran) and "
        "was not run again; check whether it did before calling it again"
    )
