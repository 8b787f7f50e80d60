"""Saving a tool's result through a short database outage: tried again, the result held meanwhile.

A tool that ran has done its work; its result is saved so that no pass runs it again
(``bot.runtime.run_once``). A native tool's result rides on its pass's last write (``rest`` or
``end_tree``: ``RunFrame.held_results``), LangGraph's own write of the tool's task keeping it
from running again until then; an attached graph's is saved as its tool returns. A save that met
the database restarting (a lost connection, a pool's dead connection, a serialization failure:
``bot.store.interruptions``) used to end the pass, and the recovery sweep then found the run
started and nothing saved: the model was told the tool "may or may not have run" although its
result was in memory all along. Here the save is tried again with a backoff for up to
``SAVE_BOUND`` on the App's clock, so a database back within seconds loses nothing; still away
after it, the last error is raised and the existing recovery path applies (the pass is given
back to the recovery sweep, which never runs the tool twice).

The pass keeps its tree meanwhile: this instance's own sweep waits for it (the tree's lock).
Another instance may take the tree over only once the lease lapsed (``tree_guard.LEASE_TTL``,
8 s without a renewal reaching the database): for a longer outage with several instances, the
one that takes over tells the model the call may have run, as before — never runs it twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Final

from bot.core.clock import Clock
from bot.store.interruptions import is_interruption

SAVE_BOUND: Final = timedelta(seconds=30)
"""How long a result is held and its save tried again: a database restart (a fast stop and
start, a failover) takes seconds."""
FIRST_WAIT: Final = timedelta(milliseconds=250)
MAX_WAIT: Final = timedelta(seconds=4)
"""Tried again after 0.25, 0.5, 1, 2, then every 4 s."""

log: Final = logging.getLogger("countersign")


async def save_result(
    clock: Clock,
    save: Callable[[], Awaitable[object]],
    *,
    tool: str,
    bound: timedelta = SAVE_BOUND,
) -> None:
    """``save()`` a tool's result, tried again while the database is interrupted, up to
    ``bound``; any other failure, or an interruption outlasting ``bound``, is raised."""
    deadline = clock.now() + bound
    wait = FIRST_WAIT
    tries = 1
    while True:
        try:
            await save()
        except Exception as error:
            if not is_interruption(error) or clock.now() + wait > deadline:
                raise
            log.warning(
                "tool.result-save-retried: the result of %s is held and saved again in %s "
                "(%s, try %d)",
                tool,
                wait,
                type(error).__name__,
                tries,
            )
            await clock.sleep(wait)
            wait = min(MAX_WAIT, wait * 2)
            tries += 1
            continue
        if tries > 1:
            log.warning("tool.result-saved: the result of %s saved after %d tries", tool, tries)
        return
