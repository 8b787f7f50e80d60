"""Where a served port listens: ``COUNTERSIGN_BIND_ADDRESS`` and the port's own setting.

One :class:`Binding` per port a process serves (Slack's ``PORT``, the web desk's, the private
``COUNTERSIGN_METRICS_PORT``), so each says the same things the same way: where it listens, and
why it cannot (one line naming the port's setting, and the address when it was set).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final

from aiohttp import web

ADDRESS_SETTING: Final = "COUNTERSIGN_BIND_ADDRESS"
EVERY_INTERFACE: Final = "0.0.0.0"


@dataclass(frozen=True, slots=True, kw_only=True)
class Binding:
    """``port`` on ``host``; ``setting`` names the port, ``address_set`` whether ``host`` came
    from ``COUNTERSIGN_BIND_ADDRESS``."""

    host: str
    port: int
    setting: str = "PORT"
    address_set: bool = False

    @classmethod
    def of(cls, address: str | None, port: int, *, default: str, setting: str = "PORT") -> Binding:
        """``port`` on the bind address setting's ``address``, else on ``default``."""
        return cls(host=address or default, port=port, setting=setting, address_set=bool(address))

    @property
    def shown(self) -> str:
        """Where it listens, as a URL's start: ``http://0.0.0.0:3000``."""
        return f"http://{_literal(self.host)}:{self.port}"

    @property
    def url(self) -> str:
        """Where a person on this machine reaches it (every interface: through loopback)."""
        address = ipaddress.ip_address(self.host)
        if address.is_unspecified:
            address = ipaddress.ip_address("::1" if address.version == 6 else "127.0.0.1")
        return f"http://{_literal(str(address))}:{self.port}"

    async def serve(self, runner: web.AppRunner) -> str | None:
        """Start listening with ``runner`` (set up); the one line saying why it cannot."""
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except OSError as error:
            where = f" on {self.host} ({ADDRESS_SETTING})" if self.address_set else ""
            return f"{self.setting} {self.port} cannot be served{where}: {error.strerror or error}"
        return None


def _literal(host: str) -> str:
    return f"[{host}]" if ":" in host else host
