"""Bolt's listener runner, answering Slack as soon as a listener acks.

Bolt (``process_before_response=False``) runs a listener in a task and looks every 10 ms
whether it has called ``ack()`` yet (``AsyncioListenerRunner.run``: ``await
asyncio.sleep(0.01)`` in a loop, up to the ack timeout). Each request's 200 waited up to 10 ms
after its ack, and at 50 concurrent clicks the loop woke thousands of times a second for the
looks: a click acked sequentially took 12.6 ms where its work takes 2 ms (issue 32). Here the
listener's ack wakes its request at once; the rest is Bolt's own code path unchanged (the
listener runs on after the ack, its errors handled by Bolt's handlers; no ack within the
timeout is Bolt's warning and no response).

Only for listeners that ack by themselves: an event's listener (Bolt acks it before running
it), a lazy listener, or ``process_before_response`` take Bolt's own path.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.listener.async_listener import AsyncListener
from slack_bolt.listener.asyncio_runner import AsyncioListenerRunner
from slack_bolt.logger.messages import warning_did_not_call_ack
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

FIRST = asyncio.FIRST_COMPLETED


def _left(listener: AsyncListener, started: float) -> float:
    """What is left of the listener's time to ack (Bolt's ``ack_timeout``, 3 s)."""
    return max(listener.ack_timeout - (time.time() - started), 0.0)


class _TellingAck(AsyncAck):
    """Bolt's ``ack``, which also wakes the request waiting for it."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # Bolt leaves it untyped
        self.called = asyncio.Event()
        self.given: BoltResponse | None = None
        """The response acked, kept: Bolt's runner clears ``response`` when the listener fails
        after its ack (its own runner then answered 404 if that came within its 10 ms)."""

    async def __call__(self, *args: Any, **kwargs: Any) -> BoltResponse:
        try:
            self.given = await super().__call__(*args, **kwargs)
            return self.given
        finally:
            self.called.set()


class AckedAtOnce(AsyncioListenerRunner):
    """:class:`AsyncioListenerRunner` whose request waits for its listener's ack by an event,
    not by looking every 10 ms."""

    @classmethod
    def replacing(cls, bolt: AsyncApp) -> AckedAtOnce:
        """Put in place of ``bolt``'s own runner (its handlers and logger kept)."""
        own = bolt.listener_runner
        runner = cls(
            logger=own.logger,
            process_before_response=own.process_before_response,
            listener_error_handler=own.listener_error_handler,
            listener_start_handler=own.listener_start_handler,
            listener_completion_handler=own.listener_completion_handler,
            lazy_listener_runner=own.lazy_listener_runner,
        )
        bolt._async_listener_runner = runner  # Bolt has no setter; ``listener_runner`` reads it
        return runner

    async def run(
        self,
        request: AsyncBoltRequest,
        response: BoltResponse,
        listener_name: str,
        listener: AsyncListener,
        starting_time: float | None = None,
    ) -> BoltResponse | None:
        if (
            self.process_before_response
            or request.lazy_only
            or listener.lazy_functions
            or listener.auto_acknowledgement
            or request.context.ack.response is not None
        ):
            return await super().run(request, response, listener_name, listener, starting_time)
        started = starting_time if starting_time is not None else time.time()
        ack = _TellingAck()
        request.context["ack"] = ack  # what the listener is given as ``ack``
        listening = asyncio.ensure_future(self._listen(ack, request, response, listener))
        called = asyncio.ensure_future(ack.called.wait())
        try:
            await asyncio.wait(
                (listening, called), timeout=_left(listener, started), return_when=FIRST
            )
            if ack.response is None and not called.done():  # ended without acking: as Bolt,
                await asyncio.wait((called,), timeout=_left(listener, started))  # until timeout
        finally:
            called.cancel()
        # as Bolt's runner ends
        acked = ack.given or ack.response
        if response is None and acked is None:
            self.logger.warning(warning_did_not_call_ack(listener_name))
            return None
        if response is None and acked is not None:
            self._debug_log_completion(started, acked)
            return acked
        return response

    async def _listen(
        self,
        ack: AsyncAck,
        request: AsyncBoltRequest,
        response: BoltResponse,
        listener: AsyncListener,
    ) -> None:
        """Bolt's ``run_ack_function_asynchronously``, as it is: a listener that fails before
        its ack is answered 500 (Bolt's error handler told); after it, only told."""
        outcome: BoltResponse | None = response
        try:
            await self.listener_start_handler.handle(request=request, response=outcome)
            await listener.run_ack_function(request=request, response=response)
        except Exception as error:
            failed = outcome if outcome is not None else BoltResponse(status=500)
            failed.status = 500
            outcome = None if ack.response is not None else failed  # None: acked already
            await self.listener_error_handler.handle(error=error, request=request, response=outcome)
            ack.response = outcome
        finally:
            await self.listener_completion_handler.handle(request=request, response=outcome)
