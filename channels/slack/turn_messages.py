"""One Slack message for the questions one model turn asked together.

When the model asks several tools at once, each call that needs approval is its own pause,
asked by its own task of the same pass, moments apart. The first one asked is posted as a
question alone (a lone question is never held back waiting for siblings that may never
come); each sibling asked after it, to the same conversation under the same approvers rule
(``turn_key``), *joins* that message: its message reference points at the shared message and
the message is updated to list every question of the turn (``render_turn``), each with its own
buttons, plus "Approve all" over those still waiting. The siblings of one turn are asked one at
a time in a process (a lock per turn), so two never post two messages.

Which message asks a turn is the store's, not this process's: every reference of a turn's
question carries the turn's key (``MessageRef.turn``), so a sibling asked by another instance,
or after a restart, finds the turn's message in the same read that looks for its own
(``SlackMessageStore.asked_with``) and joins it. A reference says whether its message asks
several questions (``MessageRef.shared``, set for all of them when a second joins): the update
of a question alone in its message reads nothing more.

Every update of a question's message (an answer, a withdrawal, an expiry, an approval counted)
renders the whole turn from its questions as they stand (``render``), and again while they
changed meanwhile, so the last update shows the latest state. A joining question owes its
update first (the outbox's update kind, due after a claim): a process that dies before the
update still shows it, later.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from slack_sdk.web.async_client import AsyncWebClient

from bot.app import App
from bot.core.channel import ChannelAsk
from bot.core.enums import PauseStatus
from bot.core.results import PauseView
from channels.kit.grants import grant_offer
from channels.kit.outcomes import Outcome
from channels.slack.batch_seal import BatchSealer
from channels.slack.button_values import answer_value
from channels.slack.outcomes import outcome_of
from channels.slack.render import ApprovalView, RenderedMessage
from channels.slack.render_turn import MAX_TURN_ITEMS, TurnItem, approvable, turn_message
from channels.slack.store import MessageRef, SlackMessageStore

ROUNDS: Final = 3
"""How often a turn's message is rendered again when its questions changed while updated."""
REMEMBERED: Final = 1024
"""Turn messages whose last rendering this process remembers (not sent again)."""

State = tuple[tuple[str, str, int, int], ...]


def turn_key(ask: ChannelAsk, *, implementation: str, channel: str, thread_ts: str | None) -> str:
    """What questions share one message: one model turn's, asked in the same place under the
    same approvers rule (the same role and implementation, the same route). A digest (64 hex
    characters, ``cs_message_refs.turn``): none of it is read back."""
    approvers = list(ask.route.approvers) if ask.route is not None else []
    parts = [ask.tenant_id, ask.turn, ask.role, implementation, channel, thread_ts, approvers]
    return hashlib.sha256(json.dumps(parts, separators=(",", ":")).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Asking:
    """Where a question of a turn is asked: ``own``, the message that asks it already (a
    retried send); else ``message``, the turn's message it joins (beside ``sharing``, the
    questions it asks), or neither: post it."""

    own: MessageRef | None = None
    message: MessageRef | None = None
    sharing: tuple[str, ...] = ()


def message_audience(channel_id: str, ts: str) -> str:
    """Whom a turn message's "Approve all" value is sealed for: that message (it is shown to
    everyone in its conversation; who may answer each item is checked when it is answered)."""
    return f"message:{channel_id}:{ts}"


class TurnMessages:
    """Which message asks each turn, and the turn's message rendered as it stands."""

    def __init__(
        self,
        *,
        app: App,
        client: AsyncWebClient,
        messages: SlackMessageStore,
        view_of: Callable[[PauseView], ApprovalView],
    ) -> None:
        self._app = app
        self._client = client
        self._messages = messages
        self._view_of = view_of
        self.sealer = BatchSealer(app.derived_keys)
        self._turns: dict[str, _Turn] = {}
        self._shown: OrderedDict[tuple[str, str], State] = OrderedDict()
        """What this process showed last of each turn's message."""

    @contextlib.asynccontextmanager
    async def asking(self, key: str, pause_id: str) -> AsyncIterator[Asking]:
        """Ask question ``pause_id`` of turn ``key``, one of the turn at a time in this process;
        yields where (``Asking``): the turn's latest message while it lists fewer than
        ``MAX_TURN_ITEMS``, as the store has it (one read)."""
        turn = self._turns.setdefault(key, _Turn())
        turn.asking += 1  # the lock is forgotten only once nobody waits for it
        try:
            async with turn.lock:
                own, refs = await self._messages.asked_with(pause_id, key)
                yield _where(own, refs)
        finally:
            turn.asking -= 1
            if turn.asking == 0:
                del self._turns[key]

    async def update(self, message: MessageRef) -> bool:
        """Show the turn ``message`` asks as its questions stand (``chat.update``), again while
        they changed meanwhile; False when it asks one question only (not a turn's). A state
        this process showed last already is not sent again (the answers of one move each ask
        for it). Raises what Slack failed with. A message that asks no other question (its
        reference not ``shared``) reads nothing."""
        if not message.shared:
            return False
        where = (message.channel_id, message.ts)
        for _ in range(ROUNDS):
            shown = await self._rendered(message)
            if shown is None:
                return False
            state, rendered = shown
            if self._shown.get(where) != state:
                await self._client.chat_update(
                    channel=message.channel_id,
                    ts=message.ts,
                    text=rendered.text,
                    blocks=rendered.blocks,
                )
                self._remember(where, state)
            if await self._state(message) == state:
                return True
        return True

    def _remember(self, where: tuple[str, str], state: State) -> None:
        self._shown[where] = state
        self._shown.move_to_end(where)
        while len(self._shown) > REMEMBERED:
            self._shown.popitem(last=False)

    async def pauses_of(self, message: MessageRef) -> list[PauseView]:
        """The questions ``message`` asks, in the model's order (none read when it asks one
        question only: not a turn's)."""
        refs = await self._messages.in_message(message)
        if len(refs) < 2:
            return []
        found = []
        for ref in refs:
            pause = await self._app.find_pause(ref.pause_id, tenant_id=ref.tenant_id)
            if pause is not None:
                found.append(pause)
        return sorted(found, key=lambda p: (p.ask_position is None, p.ask_position or 0))

    async def _rendered(self, message: MessageRef) -> tuple[State, RenderedMessage] | None:
        pauses = await self.pauses_of(message)
        if len(pauses) < 2:
            return None
        items = [_item(self._view_of(p), p) for p in pauses]
        return _state_of(pauses), turn_message(items, approve_all=self._seal(message, items))

    def _seal(self, message: MessageRef, items: Sequence[TurnItem]) -> str | None:
        ids = approvable(items)
        if len(ids) < 2:
            return None
        rounds = {i.view.pause_id: i.view.shown_round for i in items}
        values = [answer_value(pause_id, rounds.get(pause_id)) for pause_id in ids]
        audience = message_audience(message.channel_id, message.ts)
        return self.sealer.seal(values, user=audience, tenant_id=message.tenant_id)

    async def _state(self, message: MessageRef) -> State:
        return _state_of(await self.pauses_of(message))

    def open_approve_all(
        self, value: str, *, channel_id: str, ts: str, tenant_id: str
    ) -> list[str] | None:
        """The pause ids a turn message's "Approve all" showed; None for a value not sealed for
        that message of that tenant (forged, changed, or from another message)."""
        audience = message_audience(channel_id, ts)
        return self.sealer.open(value, user=audience, tenant_id=tenant_id)


@dataclass(slots=True)
class _Turn:
    """The questions of one turn being asked now, one at a time."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    asking: int = 0


def _where(own: MessageRef | None, refs: Sequence[MessageRef]) -> Asking:
    """Where to ask a question of a turn whose questions were asked in ``refs`` (oldest first):
    the latest of the turn's messages that has room (a full one is never joined, whatever the
    order of references asked at the same instant)."""
    if own is not None:
        return Asking(own=own)
    messages: dict[tuple[str, str], list[MessageRef]] = {}
    for ref in refs:
        messages.setdefault((ref.channel_id, ref.ts), []).append(ref)
    for asked in reversed(messages.values()):
        if len(asked) < MAX_TURN_ITEMS:
            return Asking(message=asked[-1], sharing=tuple(r.pause_id for r in asked))
    return Asking()


def _item(view: ApprovalView, pause: PauseView) -> TurnItem:
    """One item as its pause stands, offering a grant where the kit's offer says so."""
    offer = grant_offer(pause, view.grant_scopes, tool_input=pause.tool_input)
    return TurnItem(view=view, outcome=_settled(pause), grant=offer is not None)


def _settled(pause: PauseView) -> Outcome | None:
    return None if pause.status is PauseStatus.PENDING else outcome_of(pause)


def _state_of(pauses: Sequence[PauseView]) -> State:
    """What the turn's message shows of its questions changes with this."""
    return tuple(
        (
            p.pause_id,
            str(p.status),
            sum(1 for a in p.approvals if a.counted),
            len(p.approvals) + len(p.handovers),
        )
        for p in pauses
    )
