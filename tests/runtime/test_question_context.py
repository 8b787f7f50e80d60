"""Our own agent's question says what the person asked and why the model makes the call, as an
attached graph's does, masked like the arguments: a ``Sensitive`` value written out in the
request or the model's words is the mask."""

from __future__ import annotations

from io import StringIO

from langchain_core.messages import AIMessage

from bot import App, ExecutionStatus, WorkflowStartText
from bot.core.sensitive import MASK
from bot.testing import mock_llm
from channels.terminal import TerminalOutput
from tests.cli.terminal_cards import CARD_NUMBER, CARDS, CHARGE

MEMORY = "sqlite+aiosqlite:///:memory:"


async def test_a_native_question_carries_the_request_and_the_models_reason_masked() -> None:
    said = AIMessage(
        content=f"Charging {CARD_NUMBER} for order A-1001, as asked.",
        tool_calls=[{"name": "charge-card-tool", "args": CHARGE, "id": "c1"}],
    )
    mock_llm(CARDS.agent).then_return(said, "charged")
    async with await App.create(
        CARDS.application,
        database_url=MEMORY,
        services={TerminalOutput: TerminalOutput(StringIO())},
    ) as app:
        result = await app.execute(
            CARDS.workflow,
            WorkflowStartText(text=f"charge order A-1001 to card {CARD_NUMBER}"),
            tenant_id="desk",
            owner_id="you",
        )
        [listed] = await app.list_pending(tenant_id="desk", owner_id="you")

    assert result.status is ExecutionStatus.PAUSED
    assert listed.ask.request == f"charge order A-1001 to card {MASK}"
    assert listed.ask.stated_reason == f"Charging {MASK} for order A-1001, as asked."
