"""A free TCP port on 127.0.0.1 for a server a test starts, outside the kernel's ephemeral range.

A port the kernel gives ``bind(("127.0.0.1", 0))`` comes from the range it also gives outgoing
connections their local ports from (``/proc/sys/net/ipv4/ip_local_port_range``): between the
probe and the server's own bind, a connection another test worker opened (to PostgreSQL, to a
stub) could take it, and the server then fails with "address already in use". A port below that
range is taken only by a server that asks for it by number.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_start() -> int:
    try:
        return int(_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on now, below the ephemeral range where it can."""
    top = _ephemeral_start()
    low = 10000
    for _ in range(100) if top - low > 1000 else ():
        port = random.randrange(low, top)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as probe:  # no room below the range: the kernel's choice
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
