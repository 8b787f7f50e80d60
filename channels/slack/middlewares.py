"""Bolt middlewares: each one small, run on every request before the listeners.

* :class:`RefuseMalformed` — a payload whose fields have the wrong types (``payloads.malformed``,
  and the ids Bolt copied from it into its context: ``payloads.malformed_context``) is answered
  400 before Bolt's middlewares and matchers read it (they raised: a 500). Runs
  before authorization, with :class:`ReparseSlashCommand`, through :class:`InOrder`.
* :class:`ReparseSlashCommand` — Bolt reads any form body containing the substring
  ``payload`` as an interactivity payload, so ``/pending show payload`` arrives empty (notes
  G8); this restores the command's fields from the raw body. Runs before authorization.
* :class:`ResolveTenant` — the tenant of the request: the configured one, else the team id.
* :class:`DropEventRetries` — an Events API event already handled (a Slack retry, header
  ``X-Slack-Retry-Num``) is acknowledged and dropped: it never reaches a listener twice. When
  the event cannot be recorded (a busy database), it is answered 503 without being handled:
  Slack retries it, and the retry is handled as the first delivery (nothing lost, nothing twice).

They subclass Bolt's ``AsyncMiddleware`` (called as is) rather than being functions (Bolt
builds some thirty keyword arguments for each call of a function middleware, on the ack path).

Who may answer a pause is checked after the ack, with the pause in hand
(``channels.slack.authorization``): it needs the database and maybe Slack, too slow for an ack.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Final
from urllib.parse import parse_qsl

from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.core.clock import Clock
from channels.slack.payloads import TENANT_KEY, malformed, malformed_context, text_at
from channels.slack.redaction import log
from channels.slack.store import SeenEvents, SeenEventsBusyError

Next = Callable[[], Awaitable[BoltResponse]]


class InOrder(AsyncMiddleware):
    """Several middlewares where Bolt takes one (``before_authorize``), run in order."""

    def __init__(self, *middlewares: AsyncMiddleware) -> None:
        self._middlewares = middlewares

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Next
    ) -> BoltResponse | None:
        for middleware in self._middlewares:
            passed = _Passed(resp)
            answer = await middleware.async_process(req=req, resp=resp, next=passed.next)
            if not passed.called:
                return answer
        return await next()


class _Passed:
    """A ``next`` that only notes it was called (so :class:`InOrder` goes on to the next)."""

    def __init__(self, resp: BoltResponse) -> None:
        self._resp = resp
        self.called = False

    async def next(self) -> BoltResponse:
        self.called = True
        return self._resp


class RefuseMalformed(AsyncMiddleware):
    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Next
    ) -> BoltResponse | None:
        reason = malformed(req.body) or malformed_context(req.context)
        if reason is not None:
            return BoltResponse(status=400, body={"error": reason})
        return await next()


class ReparseSlashCommand(AsyncMiddleware):
    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Next
    ) -> BoltResponse | None:
        # Bolt leaves the body empty when it took a form for a payload it could not find
        if req.mode == "http" and not req.body and req.raw_body[:1] not in ("{", ""):
            form = dict(parse_qsl(req.raw_body, keep_blank_values=True))
            if "command" in form and "payload" not in form:
                req.body = form
                build_async_context(req.context, form)
        return await next()


class ResolveTenant(AsyncMiddleware):
    def __init__(self, fixed: str | None) -> None:
        self._fixed = fixed

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Next
    ) -> BoltResponse | None:
        tenant = self._fixed or req.context.team_id
        if tenant:
            req.context[TENANT_KEY] = tenant
        return await next()


CLAIMED_EVENT: Final = "countersign_claimed_event"
"""The Bolt context key naming the event a request claimed (see ``handled_event``)."""

EVENT_CLAIM_TTL: Final = timedelta(seconds=10)
"""How long a delivery's claim on an event stands before a retry may take it over. Slack's
first retry comes about 3 s after a delivery it got no answer to, the next after a minute:
the first waits a moment for the delivery to be handled (then it is dropped with 200), else is
answered 503 — never 200 while the delivery may have died: Slack would not retry again, and
the event would be lost —; the next is handled if the delivery died, dropped if it was
handled meanwhile."""


HELD_POLLS: Final = 15
HELD_POLL_SECONDS: Final = 0.1
"""A retry that meets a fresh claim looks whether its delivery was handled every 0.1 s for
1.5 s (within Slack's 3 s) before it is answered 503."""


def handled_event(request: AsyncBoltRequest) -> str | None:
    """The event a dispatched request claimed: mark it handled once the dispatch (listener
    middleware and ack included) is over."""
    claimed = request.context.get(CLAIMED_EVENT)
    return claimed if isinstance(claimed, str) else None


class DropEventRetries(AsyncMiddleware):
    """Handles each Events API event once: a retry of one handled is dropped with 200; a retry
    of one being handled (claimed, not handled yet) is answered 503, for Slack to retry later;
    a retry of one whose delivery died before its ack (its claim lapsed) is handled."""

    def __init__(self, seen: SeenEvents, clock: Clock) -> None:
        self._seen = seen
        self._clock = clock

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse, next: Next
    ) -> BoltResponse | None:
        body = req.body
        event_id = text_at(body, "event_id") if body.get("type") == "event_callback" else None
        if event_id is None:
            return await next()
        retry = req.headers.get("x-slack-retry-num", ["-"])[0]
        try:
            first = await self._seen.first_time(event_id, self._clock.now())
        except SeenEventsBusyError as error:
            log.warning(
                "slack: event %s (retry %s) left for Slack to retry: %s", event_id, retry, error
            )
            return BoltResponse(status=503, body={"error": "busy, retry later"})
        if not first:
            taken = await self._taken_over(event_id)
            if taken is _Claim.HELD:
                taken = await self._until_handled(event_id)
            if taken is _Claim.HANDLED:
                log.info("slack: event %s seen before (retry %s): dropped", event_id, retry)
                return BoltResponse(status=200, body="")
            if taken is _Claim.HELD:
                log.info(
                    "slack: event %s being handled (retry %s): left for a later retry",
                    event_id,
                    retry,
                )
                return BoltResponse(status=503, body={"error": "being handled, retry later"})
        # marked handled once its listeners ran up to the ack (``handled_event``), not here:
        # a global middleware's next() returns before the listeners run
        req.context[CLAIMED_EVENT] = event_id
        return await next()

    async def _taken_over(self, event_id: str) -> _Claim:
        """A retry of an event whose first delivery was claimed but never handled (the process
        died before its ack, e.g. while it recorded a reply) is handled, once."""
        now = self._clock.now()
        try:
            if await self._seen.take_over(event_id, now, now - EVENT_CLAIM_TTL):
                return _Claim.TAKEN_OVER
            if await self._seen.was_handled(event_id):
                return _Claim.HANDLED
        except SeenEventsBusyError:
            pass
        return _Claim.HELD

    async def _until_handled(self, event_id: str) -> _Claim:
        """A retry that met its first delivery at work waits a little for it to be handled
        (a delivery takes about a second): then it is dropped with 200, else left to Slack."""
        for _ in range(HELD_POLLS):
            await asyncio.sleep(HELD_POLL_SECONDS)
            try:
                if await self._seen.was_handled(event_id):
                    return _Claim.HANDLED
            except SeenEventsBusyError:
                break
        return _Claim.HELD


class _Claim(enum.Enum):
    """What a retry found of its event's earlier delivery."""

    HANDLED = "handled"  # acknowledged: the retry is dropped
    TAKEN_OVER = "taken-over"  # claimed long ago, never handled: the retry handles it
    HELD = "held"  # claimed lately (or unknown: the database busy): Slack retries later
