"""The Slack channel worked as Slack works it: signed clicks, modal submissions and thread
replies against the bot over HTTP, what it says read back from the Web API stub; every Block
Kit payload it sent parsed by ``slack_sdk.models`` when the test ends."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

from slack_sdk.models.blocks import Block, HeaderBlock, SectionBlock

from bot import ExecutionResult, PauseStatus
from channels.slack.render import APPROVE_ACTION, EDIT_ACTION, REJECT_ACTION, RESPOND_ACTION
from channels.slack.render_modal import REASON_ACTION, REASON_BLOCK, RESPONSE_ACTION, RESPONSE_BLOCK
from tests.conformance.behind import (
    EXPENSE,
    GRAPH_TOOL,
    LARGE_REFUND_ARGUMENTS,
    REFUND_ARGUMENTS,
    REQUEST,
    Behind,
    NativeQuestion,
)
from tests.conformance.driver import (
    Answer,
    Asked,
    Capability,
    Kind,
    People,
    Scenario,
    Shown,
    Told,
    Waiting,
)
from tests.slack.checks import all_text, assert_sent_valid, buttons, strings
from tests.slack.conftest import SlackWorld, open_world
from tests.slack.office import (
    ACCOUNTANT,
    FINANCE,
    MANAGER,
    ONCALL,
    OWNER,
    STRANGER,
    BookExpenseTool,
    RefundApprovalChannel,
    RefundCardTool,
    WireMoneyTool,
)
from tests.slack.stub import SlackStub

ACTIONS: Mapping[Kind, str] = {
    Kind.APPROVE: APPROVE_ACTION,
    Kind.REJECT: REJECT_ACTION,
    Kind.EDIT: EDIT_ACTION,
    Kind.RESPOND: RESPOND_ACTION,
}
KINDS = {action: kind for kind, action in ACTIONS.items()}
WIRE = {"iban": "DE02", "amount": 9}
QUESTIONS: dict[Scenario, NativeQuestion] = {
    Scenario.REFUND: NativeQuestion(
        tool=RefundCardTool,
        arguments=REFUND_ARGUMENTS,
        ran_as="refund",
        owner=OWNER,
        approver=MANAGER,
    ),
    Scenario.OWNERS: NativeQuestion(
        tool=BookExpenseTool, arguments=EXPENSE, ran_as="expense", owner=OWNER, approver=OWNER
    ),
    Scenario.OWN_REQUEST: NativeQuestion(  # the manager asks; an accountant of FINANCE may approve
        tool=WireMoneyTool, arguments=WIRE, ran_as="wire", owner=MANAGER, approver=MANAGER
    ),
    Scenario.TIMED: NativeQuestion(
        tool=WireMoneyTool, arguments=WIRE, ran_as="wire", owner=OWNER, approver=MANAGER
    ),
}
HOUR = timedelta(hours=1)
QUESTIONS[Scenario.LARGE_REFUND] = dataclasses.replace(
    QUESTIONS[Scenario.REFUND], arguments=LARGE_REFUND_ARGUMENTS
)


class SlackDriver:
    name: ClassVar[str] = "slack"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(Capability)
    missing: ClassVar[Mapping[Capability, str]] = {}
    people: ClassVar[People] = People(
        requester=OWNER,
        stranger=STRANGER,
        second_approver=ACCOUNTANT,  # a member of the approvers' user group
        escalated_to=ONCALL,
    )

    def __init__(self, world: SlackWorld) -> None:
        self.world = world
        self.behind = Behind(app=world.app, ledger=world.ledger, llm=world.llm, tenant=world.tenant)
        self._ts: dict[str, str] = {}  # pause id -> the question's message ts

    # ---------------------------------------------------------------- asking

    async def ask(
        self,
        scenario: Scenario,
        *,
        allowed: Sequence[Kind] = (Kind.APPROVE, Kind.EDIT, Kind.REJECT),
        final: str = "all done",
    ) -> Asked:
        world = self.world
        if scenario in (Scenario.GRAPH, Scenario.GRAPH_WITH_SECRET):
            secret = scenario is Scenario.GRAPH_WITH_SECRET
            result = await self.behind.attach_graph(
                RefundApprovalChannel, allowed, owner=OWNER, secret=secret
            )
            tool, approver = GRAPH_TOOL, MANAGER
        else:
            question = QUESTIONS[scenario]
            world.stub.groups[FINANCE] = [ACCOUNTANT]

            async def run(owner: str) -> ExecutionResult:
                return await world.execute(REQUEST, owner=owner)

            result = await self.behind.ask_native(question, run, final=final)
            tool, approver = question.tool_name, question.approver
        posted = world.stub.of("chat.postMessage")[-1]
        pause_id = str(buttons(posted.blocks())[0]["value"])
        self._ts[pause_id] = str(world.stub.posted[-1]["ts"])
        if scenario is Scenario.TIMED:
            await world.clock.advance(timedelta(seconds=5))  # just after a sweep's tick
        return self.behind.keep(scenario, result, pause_id=pause_id, tool=tool, approver=approver)

    # ---------------------------------------------------------------- reading

    async def shown(self, asked: Asked, *, to: str | None = None) -> Shown:
        """The question's message as it now is in its conversation (the same for everyone)."""
        await self.world.settle()
        ts = self._ts[asked.pause_id]
        versions = [
            call
            for call in self.world.stub.calls
            if (call.method == "chat.update" and call.payload.get("ts") == ts)
            or (call.method == "chat.postMessage" and _posted_ts(self.world, call) == ts)
        ]
        blocks = versions[-1].blocks()
        parsed = [Block.parse(block) for block in blocks]
        title = next(
            (b.text.text for b in parsed if isinstance(b, HeaderBlock) and b.text is not None), ""
        )
        fields: dict[str, str] = {}
        for block in parsed:
            if isinstance(block, SectionBlock):
                for field in block.fields or []:
                    label, _, value = field.text.partition("\n")
                    fields[label.strip("*")] = value
        offered = frozenset(
            KINDS[str(b["action_id"]).partition(":")[0]]
            for b in buttons(blocks)
            if str(b["action_id"]).partition(":")[0] in KINDS
        )
        words = "\n".join(value for _, key, value in strings(blocks) if key == "text")
        text = f"{words}\n{versions[-1].payload.get('text', '')}"
        return Shown(title=title, text=text, fields=fields, offered=offered)

    # ---------------------------------------------------------------- answering

    async def answer(self, asked: Asked, answer: Answer, *, by: str) -> Told:
        world = self.world
        was = await self._status(asked)
        seen = len(world.stub.calls)
        ts = self._ts[asked.pause_id]
        opened = len(world.stub.of("views.open"))
        await world.click(by, ACTIONS[answer.kind], asked.pause_id, message_ts=ts)
        await world.settle()
        said: list[str] = []
        if answer.kind is not Kind.APPROVE and len(world.stub.of("views.open")) > opened:
            view = world.stub.of("views.open")[-1].view()
            response = await world.submit(by, view, _typed(view, answer))
            await world.settle()
            body = await response.text()
            if body:
                said.extend(str(e) for e in json.loads(body).get("errors", {}).values())
        said.extend(
            str(call.payload.get("text", ""))
            for call in world.stub.calls[seen:]
            if call.method in ("chat.postEphemeral", "response_url")
        )
        now = await self._status(asked)
        return Told(
            taken=was is PauseStatus.PENDING and now is not PauseStatus.PENDING,
            text="\n".join(said),
        )

    async def reply(self, asked: Asked, words: str, *, by: str) -> Told:
        world = self.world
        was = await self._status(asked)
        seen = len(world.stub.calls)
        await world.message(by, words, thread_ts=self._ts[asked.pause_id])
        await world.settle()
        said = [
            str(call.payload.get("text", ""))
            for call in world.stub.calls[seen:]
            if call.method == "chat.postEphemeral"
            or (call.method == "chat.postMessage" and call.payload.get("thread_ts"))
        ]
        now = await self._status(asked)
        taken = was is PauseStatus.PENDING and now is not PauseStatus.PENDING
        return Told(taken=taken, text="\n".join(said))

    async def waiting_for(self, person: str) -> Waiting:
        """``/pending``, as ``person`` types it: the ephemeral list, one Approve per request."""
        seen = len(self.world.stub.of("response_url"))
        response = await self.world.command(person)
        assert response.status == 200
        await self.world.settle()
        [sent] = self.world.stub.of("response_url")[seen:]
        blocks = sent.blocks()
        for block in blocks:
            assert Block.parse(block) is not None
        words = "\n".join(value for _, key, value in strings(blocks) if key == "text")
        approvals = [b for b in buttons(blocks) if str(b["action_id"]).startswith(APPROVE_ACTION)]
        return Waiting(count=len(approvals), text=f"{words}\n{sent.payload.get('text', '')}")

    async def _status(self, asked: Asked) -> PauseStatus | None:
        pause = await self.world.app.find_pause(asked.pause_id, tenant_id=self.world.tenant)
        return None if pause is None else pause.status

    async def withdraw(self, asked: Asked) -> None:
        await self.behind.withdraw(asked)
        await self.world.settle()

    async def cancel(self, asked: Asked) -> None:
        await self.world.app.cancel(asked.thread_id, tenant_id=self.world.tenant)
        await self.world.settle()

    async def advance(self, asked: Asked, hours: int) -> list[str]:
        seen = len(self.world.stub.of("chat.postMessage"))
        for _ in range(hours):
            await self.world.clock.advance(HOUR)
        await self.world.settle()
        return [
            str(c.payload.get("text", "")) for c in self.world.stub.of("chat.postMessage")[seen:]
        ]

    # ---------------------------------------------------------------- behind

    def runs(self) -> list[dict[str, object]]:
        return self.behind.runs()

    def agent_read(self) -> list[str]:
        return self.behind.agent_read()

    async def audit(self, asked: Asked) -> str:
        return await self.behind.audit(asked)

    def everything_said(self) -> str:
        """Every word sent to Slack (texts, blocks, views; not button values or signed modal
        metadata, which people do not read)."""
        return "\n".join(all_text(call.payload) for call in self.world.stub.calls)

    def check_sent(self) -> None:
        """Every message and view the bot sent is valid Block Kit, pause ids only in buttons."""
        assert_sent_valid(self.world.stub.calls, {a.pause_id for a in self.behind.asked})


def _posted_ts(world: SlackWorld, call: Any) -> str | None:
    """The ts the stub gave a ``chat.postMessage`` (its posts are kept in order)."""
    posts = world.stub.of("chat.postMessage")
    index = next(i for i, c in enumerate(posts) if c is call)
    return str(world.stub.posted[index]["ts"]) if index < len(world.stub.posted) else None


def _typed(view: Mapping[str, Any], answer: Answer) -> dict[str, Any]:
    """The modal's state as Slack sends it, with ``answer`` typed in."""
    match answer.kind:
        case Kind.REJECT:
            return {
                REASON_BLOCK: {REASON_ACTION: {"type": "plain_text_input", "value": answer.reason}}
            }
        case Kind.RESPOND:
            value = {"type": "plain_text_input", "value": answer.response}
            return {RESPONSE_BLOCK: {RESPONSE_ACTION: value}}
        case _:
            state: dict[str, Any] = {}
            for block in view.get("blocks", []):
                element = block.get("element")
                if block.get("type") != "input" or element is None:
                    continue
                key = str(block["block_id"])
                typed = (answer.arguments or {}).get(key)
                state[key] = {element["action_id"]: {"type": element["type"], "value": typed}}
            return state


@asynccontextmanager
async def slack_driver(tmp_path: Path) -> AsyncIterator[SlackDriver]:
    stub = SlackStub()
    await stub.start()
    try:
        async with open_world(stub, f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}") as world:
            driver = SlackDriver(world)
            yield driver
            driver.check_sent()
    finally:
        await stub.close()
