"""Assembly: every rule checked at once, one AssemblyError listing each broken rule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from bot import (
    App,
    AssemblyError,
    ChannelAsk,
    ChannelOf,
    ChannelOutcome,
    DecidedBy,
    PauseAnswerer,
    WorkflowStartText,
    agent,
    application,
    channel,
    channel_role,
    reply_interpreter,
    start,
    tool,
    workflow,
)
from bot.testing import mock_llm
from tests.apps import OfficeFinish, OfficeStart
from tests.conftest import NO_SETTINGS
from tests.office import OfficeApplication


class In(BaseModel):
    x: int


class Other(BaseModel):
    y: int


@reply_interpreter(name="shared-reply-interpreter", description="d", decided_by=DecidedBy.CODE)
class SharedInterpreter:
    def interpret(self, input: Any) -> Any: ...


@reply_interpreter(name="badname", description="d", decided_by=DecidedBy.CODE)
class NoMethodInterpreter: ...


class Undecorated:
    def interpret(self, input: Any) -> Any: ...


@channel_role(
    name="a-channel",
    description="d",
    approves=In,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=SharedInterpreter,
)
class RoleA(ChannelOf): ...


@channel_role(
    name="b-channel",
    description="d",
    approves=In,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=SharedInterpreter,
)
class RoleB(ChannelOf): ...


@channel_role(
    name="c-channel",
    description="d",
    approves=In,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=NoMethodInterpreter,
)
class RoleC(ChannelOf): ...


@channel_role(
    name="d-channel",
    description="d",
    approves=In,
    answered_by=PauseAnswerer.CHANNEL,
    reply_interpreter=Undecorated,
)
class RoleD(ChannelOf): ...


@channel_role(
    name="unimplemented-channel", description="d", approves=In, answered_by=PauseAnswerer.CHANNEL
)
class Unimplemented(ChannelOf): ...


@channel_role(
    name="mismatch-channel", description="d", approves=Other, answered_by=PauseAnswerer.CHANNEL
)
class Mismatch(ChannelOf): ...


def _impl(role: type, name: str) -> type:
    async def send(self: Any, ask: ChannelAsk) -> Any:
        return ChannelOutcome.await_reply()

    cls = type(f"Impl{role.__name__}", (role,), {"send": send})
    return channel(name=name, description="d")(cls)


ImplA = _impl(RoleA, "impl-a-channel")
ImplB = _impl(RoleB, "impl-b-channel")
ImplC = _impl(RoleC, "impl-c-channel")
ImplD = _impl(RoleD, "impl-d-channel")
ImplMismatch = _impl(Mismatch, "impl-mismatch-channel")
ImplA2 = _impl(RoleA, "second-a-channel")


@channel(name="lazy-channel", description="no send")
class NoSend(RoleA): ...


def _tool(name: str, role: type | None, input: type[BaseModel] = In) -> type:
    cls = type(name.title().replace("-", ""), (), {"run": lambda self, i: "ok"})
    return tool(name=name, description="d", input=input, channel=role)(cls)


ToolA = _tool("a-tool", RoleA)
ToolB = _tool("b-tool", RoleB)
ToolC = _tool("c-tool", RoleC)
ToolD = _tool("d-tool", RoleD)
ToolU = _tool("u-tool", Unimplemented)
ToolM = _tool("m-tool", Mismatch)
BadName = _tool("refunder", None)


@agent(
    name="broken-agent",
    description="d",
    prompt="p",
    model="nobody/serves-this",
    tools=[ToolA, ToolB, ToolC, ToolD, ToolU, ToolM, BadName],
)
class BrokenAgent: ...


@workflow(
    name="broken-workflow",
    version="1",
    flow=[
        start(OfficeStart).returns(WorkflowStartText).to_agent(BrokenAgent).to_finish(OfficeFinish)
    ],
)
class BrokenWorkflow: ...


@application(
    name="broken",
    workflows=[BrokenWorkflow],
    channels=[ImplA, ImplB, ImplC, ImplD, ImplMismatch, ImplA2, NoSend],
)
class BrokenApplication: ...


async def _create(application: type) -> App:
    return await App.create(
        application, database_url="sqlite+aiosqlite:///:memory:", settings=NO_SETTINGS
    )


async def test_every_broken_rule_is_reported_at_once() -> None:
    with pytest.raises(AssemblyError) as error:
        await _create(BrokenApplication)
    rules = error.value.rules
    assert "model.unserved" in rules
    assert "name.kind-suffix" in rules  # "refunder" and "badname"
    assert "reply-interpreter.no-interpret-method" in rules
    assert "reply-interpreter.not-an-interpreter" in rules
    assert "channel.shared-interpreter" in rules
    assert "channel.unimplemented" in rules
    assert "channel.approves-mismatch" in rules
    assert "channel.ambiguous" in rules
    assert "channel.no-send" in rules
    text = str(error.value)
    assert "refunder" in text and "badname" in text and "nobody/serves-this" in text
    assert sum(1 for v in error.value.violations if v.rule == "name.kind-suffix") == 2


async def test_a_scripted_model_needs_no_provider() -> None:
    mock_llm(BrokenAgent)
    with pytest.raises(AssemblyError) as error:
        await _create(BrokenApplication)
    assert "model.unserved" not in error.value.rules


async def test_a_provider_that_serves_the_name() -> None:
    from pydantic import SecretStr

    from bot import Settings
    from bot.models import OpenAICompatibleProvider, OpenAICompatibleSettings

    provider = OpenAICompatibleProvider(
        OpenAICompatibleSettings(
            base_url="http://127.0.0.1:9/v1", api_key=SecretStr("k"), models=("moonshotai/*",)
        )
    )
    assert provider.serves("moonshotai/kimi-k2.6")
    settings = Settings(
        countersign_model_base_url="http://127.0.0.1:9/v1",
        countersign_model_api_key="k",
        countersign_model_names="moonshotai/*",
    )
    app = await App.create(
        OfficeApplication, database_url="sqlite+aiosqlite:///:memory:", settings=settings
    )
    await app.close()


async def test_not_an_application() -> None:
    with pytest.raises(AssemblyError) as error:
        await _create(In)
    assert error.value.rules == ["application.not-an-application"]


async def test_answered_by_is_required() -> None:
    with pytest.raises(TypeError):
        channel_role(name="x-channel", description="d", approves=In)  # type: ignore[call-arg]
