"""Round trips to PostgreSQL, counted on the wire by a loopback proxy between client and server.

A round trip is the client waiting for the server: each time the server speaks after the
client did (a turn of the conversation), whichever the driver (asyncpg for the store, psycopg
for the checkpointer) and however many statements one message carried (a data-modifying CTE
is one; BEGIN, the statements, COMMIT are one each). Connections are told apart by their
startup message: asyncpg's names ``client_encoding`` (``utf-8``), libpq's does not.

    async with RoundTrips.between(url) as trips:   # url: a postgresql URL
        ...  connect to trips.url instead ...
        with trips.counting("execute"):
            ...                 # trips.count[("execute", "store")], [("execute", "checkpointer")]

The proxy runs on the caller's event loop: for counts, never for timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections import Counter
from collections.abc import AsyncIterator, Iterator

from sqlalchemy.engine import make_url

_SSL_OR_GSS = (80877103, 80877104)
"""The codes of SSLRequest and GSSENCRequest, which may come before the startup message."""


class RoundTrips:
    def __init__(self, host: str, port: int) -> None:
        self._upstream = (host, port)
        self._phase: str | None = None
        self.count: Counter[tuple[str, str]] = Counter()
        """Round trips by (phase counted, whose connection: "store" or "checkpointer")."""
        self.port = 0
        self._server: asyncio.Server | None = None
        self._pumps: set[asyncio.Task[None]] = set()

    @classmethod
    @contextlib.asynccontextmanager
    async def between(cls, url: str) -> AsyncIterator[RoundTrips]:
        """A proxy in front of ``url``'s server; ``proxied(url)`` points a URL at it."""
        parsed = make_url(url)
        trips = cls(parsed.host or "127.0.0.1", parsed.port or 5432)
        trips._server = await asyncio.start_server(trips._serve, "127.0.0.1", 0)
        trips.port = trips._server.sockets[0].getsockname()[1]
        try:
            yield trips
        finally:
            trips._server.close()
            for pump in list(trips._pumps):
                pump.cancel()
            await asyncio.gather(*trips._pumps, return_exceptions=True)

    def proxied(self, url: str) -> str:
        """``url`` with its host and port the proxy's."""
        parsed = make_url(url).set(host="127.0.0.1", port=self.port)
        return parsed.render_as_string(hide_password=False)

    @classmethod
    def none(cls) -> RoundTrips:
        """Counts nothing (no proxy: SQLite)."""
        return cls("", 0)

    @contextlib.contextmanager
    def counting(self, phase: str) -> Iterator[None]:
        """Round trips made inside go to ``phase``."""
        self._phase = phase
        try:
            yield
        finally:
            self._phase = None

    async def _serve(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        server_in, server_out = await asyncio.open_connection(*self._upstream)
        conversation = _Conversation()
        pumps = [
            asyncio.create_task(self._pump(client_in, server_out, conversation, from_client=True)),
            asyncio.create_task(self._pump(server_in, client_out, conversation, from_client=False)),
        ]
        self._pumps.update(pumps)
        try:
            await asyncio.gather(*pumps, return_exceptions=True)
        finally:
            self._pumps.difference_update(pumps)
            for writer in (client_out, server_out):
                writer.close()

    async def _pump(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        conversation: _Conversation,
        *,
        from_client: bool,
    ) -> None:
        try:
            while data := await reader.read(65536):
                if from_client:
                    conversation.heard(data)
                elif conversation.client_spoke_last and self._phase is not None:
                    self.count[(self._phase, conversation.driver)] += 1
                conversation.client_spoke_last = from_client
                writer.write(data)
                await writer.drain()
        finally:
            if writer.can_write_eof():
                with contextlib.suppress(OSError):
                    writer.write_eof()


class _Conversation:
    """One connection: who spoke last, and whose it is (read from its startup message)."""

    def __init__(self) -> None:
        self.client_spoke_last = False
        self.driver = "?"
        self._start = b""

    def heard(self, data: bytes) -> None:
        if self.driver != "?" or len(self._start) > 4096:
            return
        self._start += data
        start = self._start
        while len(start) >= 8:
            length, code = struct.unpack("!II", start[:8])
            if code not in _SSL_OR_GSS:
                if len(start) >= length:
                    self.driver = (
                        "store" if b"client_encoding\0" in start[:length] else "checkpointer"
                    )
                return
            start = start[8:]
