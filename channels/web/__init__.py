"""The web channel, in one folder: signed links, the question pages and the inbox.

- outbound: ``web_channel(Role, name=..., approvers=[...], escalate_to=[...], notify=...)``
  (``channel.py``) makes the web implementation of a role; its ``send``, ``remind`` and
  ``escalate`` sign a link per person (``links.py``) and hand each a notice (``notify.py``: a
  log line unless the application gives a notifier).
- inbound: ``WebServer(app, base_url=...)`` (``server.py``) serves the pages on aiohttp, each
  offering only the answers its asker takes (``offers.py``); an answer is one ``App.answer``
  call (``answering.py``); the inbox (``inbox.py``) lists what expires first at the top.
- rendering (``render.py``, ``render_inbox.py``, ``form.py``, ``times.py``) is pure: HTML out,
  no I/O, no script.

Nothing below this package imports it, and it imports no other channel (checked in CI).
"""

from channels.web.channel import WebChannel, WebOutbox, web_channel
from channels.web.links import Link, LinkError, LinkKind, LinkSigner
from channels.web.notify import NoticeKind, Notifier, WebNotice, log_notifier
from channels.web.server import WebServer

__all__ = [
    "Link",
    "LinkError",
    "LinkKind",
    "LinkSigner",
    "NoticeKind",
    "Notifier",
    "WebChannel",
    "WebNotice",
    "WebOutbox",
    "WebServer",
    "log_notifier",
    "web_channel",
]
