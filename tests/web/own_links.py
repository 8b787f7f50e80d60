"""A question's link signed for a person the notifier did not tell (a requester whose role
separates duties), as one forwarded to them would be."""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.web.conftest import WebWorld
from tests.web.office import TENANT


async def link_for(world: WebWorld, person: str) -> str:
    """The path of a link to the one waiting question, signed for ``person``."""
    [pending] = await world.app.list_pending(tenant_id=TENANT, include_channel_pause_ids=True)
    assert pending.pause_id is not None
    url = world.server.outbox.question_url(pending.pause_id, approver=person, tenant_id=TENANT)
    return urlsplit(url).path
