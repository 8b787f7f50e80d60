"""The web channel, in one folder: signed links, the question pages and the inbox.

- outbound: ``web_channel(Role, name=..., approvers=[...])`` (``channel.py``) makes the web
  implementation of a role; its ``send`` signs a link per approver (``links.py``) and hands it
  to a notifier (``notify.py``: a log line unless the application gives one).
- inbound: ``WebServer(app, base_url=...)`` (``server.py``) serves the pages on aiohttp; an
  answer is one ``App.answer`` call (``answering.py``).
- rendering (``render.py``, ``form.py``) is pure: HTML out, no I/O, no script.

Nothing below this package imports it, and it imports no other channel (checked in CI).
"""

from channels.web.channel import WebChannel, WebOutbox, web_channel
from channels.web.links import Link, LinkError, LinkKind, LinkSigner
from channels.web.notify import Notifier, WebNotice, log_notifier
from channels.web.server import WebServer

__all__ = [
    "Link",
    "LinkError",
    "LinkKind",
    "LinkSigner",
    "Notifier",
    "WebChannel",
    "WebNotice",
    "WebOutbox",
    "WebServer",
    "log_notifier",
    "web_channel",
]
