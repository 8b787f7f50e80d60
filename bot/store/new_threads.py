"""The LangGraph threads a checkpointer knows to be new: their first read answered at once.

LangGraph begins every run by reading its thread's latest checkpoint. The first pass of a new
root execution runs on a thread named by an id just made for it (``App._new_root``: a random
uuid), so that read can only find nothing: a round trip to the database for ``None``, one in
each pause cycle's four or five passes. The engine names the thread new for the length of that
pass (``NewThreads.first_pass``); the saver answers the thread's first read of its root
namespace with ``None`` itself, once, and reads the database for every read after it, for
another namespace (a subgraph's), or once the pass is over (a failed first pass's recovery
reads what it wrote).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any


class NewThreads:
    """Threads whose first read is known to find no checkpoint (see the module's docstring)."""

    __slots__ = ("_threads",)

    def __init__(self) -> None:
        self._threads: set[str] = set()

    @contextlib.contextmanager
    def first_pass(self, thread_id: str) -> Iterator[None]:
        """While the block runs, the first read of ``thread_id``'s latest checkpoint in its root
        namespace finds none without asking the database."""
        self._threads.add(thread_id)
        try:
            yield
        finally:
            self._threads.discard(thread_id)

    def known_empty(self, config: Mapping[str, Any]) -> bool:
        """Whether a read of ``config`` is a new thread's first (and so finds nothing); it is
        then not new any more."""
        configurable = config.get("configurable") or {}
        thread_id = configurable.get("thread_id")
        if (
            thread_id not in self._threads
            or configurable.get("checkpoint_ns")
            or configurable.get("checkpoint_id")
        ):
            return False
        self._threads.discard(thread_id)
        return True
