"""Graph modules as a person writes them, written by the tests into the folder they serve from.

``my_agent``: LangChain's ``create_agent`` with ``HumanInTheLoopMiddleware`` over one refund
tool, on a scripted model (no network) that says why before it asks to refund, then answers.
Each run of the tool is a line of ``runs.txt`` beside the module, so a test counts them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

ANSWER: Final = "Refunded order A-7: 30.00 back on the card."
REASON: Final = "The order arrived broken, so I will refund it."
REQUEST: Final = "refund order A-7, it arrived broken"

MY_AGENT: Final = f'''
from pathlib import Path

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from bot.testing import ScriptedChatModel

RUNS = Path(__file__).with_name("runs.txt")


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an order's card payment."""
    with RUNS.open("a", encoding="utf-8") as runs:
        runs.write(f"{{order_id}} {{amount:.2f}}\\n")
    return f"refunded {{amount:.2f}} on order {{order_id}}"


model = ScriptedChatModel().then_return(
    AIMessage(
        content={REASON!r},
        tool_calls=[{{"name": "refund", "args": {{"order_id": "A-7", "amount": 30}}, "id": "c1"}}],
    ),
    {ANSWER!r},
)
graph = create_agent(
    model,
    tools=[refund],
    middleware=[
        HumanInTheLoopMiddleware(
            interrupt_on={{"refund": {{"allowed_decisions": ["approve", "edit", "reject"]}}}}
        )
    ],
)
'''

PLAIN_GRAPH: Final = """
from typing_extensions import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    text: str


def review(state: State) -> State:
    return {"text": str(interrupt("Send it?"))}


builder = StateGraph(State)
builder.add_node("review", review)
builder.add_edge(START, "review")
builder.add_edge("review", END)
graph = builder.compile()
"""

NOTHING_TO_APPROVE: Final = """
from typing_extensions import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    text: str


def echo(state: State) -> State:
    return {"text": state["text"]}


builder = StateGraph(State)
builder.add_node("echo", echo)
builder.add_edge(START, "echo")
builder.add_edge("echo", END)
graph = builder.compile()
not_a_graph = 42
"""


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return path


def runs(folder: Path) -> list[str]:
    path = folder / "runs.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
