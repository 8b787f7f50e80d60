"""Handing a question on from its page ("Reassign"): the approver names a person, who may answer
it from then on (``App.reassign``) and is sent their own link (``NoticeKind.HANDOVER``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from bot.app import App
from bot.core.errors import (
    CountersignError,
    DtoValidationError,
    NotPausedError,
    UnknownPauseError,
)
from bot.core.results import PauseView
from channels.web.answering import Said, WebAnswering
from channels.web.catalog import WebCatalog
from channels.web.channel import WebOutbox
from channels.web.links import Link

REASSIGN_ACTION: Final = "reassign"


async def reassign_from_page(
    app: App,
    outbox: WebOutbox,
    answering: WebAnswering,
    catalog: WebCatalog,
    link: Link,
    fields: Mapping[str, str],
) -> Said:
    """Hand the question of ``link`` to the person the form names, as ``link``'s approver."""
    to = fields.get("to", "").strip()

    async def may_answer(pause: PauseView) -> str | None:
        return await answering.refusal(pause, link.approver)

    try:
        pause = await app.reassign(
            link.pause_id, tenant_id=link.tenant_id, by=link.approver, to=to, may_answer=may_answer
        )
    except UnknownPauseError as error:
        return Said(status=404, text=error.message, closed=True)
    except NotPausedError as error:
        return Said(status=409, text=error.message)
    except DtoValidationError as error:
        return Said(status=422, text=error.message)
    except CountersignError as error:
        return Said(status=403, text=error.message)
    config = catalog.channel(pause.channel)
    if config is not None:
        await outbox.hand_over(pause, to, config)
    return Said(status=303)
