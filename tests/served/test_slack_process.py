"""``COUNTERSIGN_GRAPH=my_agent:graph python -m bot serve``: a graph module a person wrote,
served in Slack as a process, against the Slack Web API stub."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from tests.cli.processes import Ran, person_env, python_m_bot, python_m_bot_in_process
from tests.ports import free_port
from tests.served.modules import (
    ANSWER,
    MY_AGENT,
    NOTHING_TO_APPROVE,
    PLAIN_GRAPH,
    REASON,
    REQUEST,
    runs,
    write,
)
from tests.slack.checks import all_text, assert_sent_valid, buttons
from tests.slack.conftest import SECRET
from tests.slack.stub import BOT_USER, TEAM, SlackStub
from tests.slack.test_serve import click_payload, signed_post, start_serve, stop, wait_healthy

THREAD_TS = "1700000970.000001"


def served_env(stub_url: str, port: int, **settings: str) -> dict[str, str]:
    return person_env(
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=stub_url,
        PORT=str(port),
        **settings,
    )


def mention(text: str) -> str:
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": TEAM,
            "event_id": "Ev0GRAPH",
            "event": {
                "type": "app_mention",
                "user": "U0OWNER",
                "text": f"<@{BOT_USER}> {text}",
                "channel": "C0GENERAL",
                "ts": THREAD_TS,
            },
        }
    )


async def test_a_mention_runs_your_graph_and_its_answer_is_said_in_the_thread(
    stub: SlackStub, tmp_path: Path
) -> None:
    write(tmp_path, "my_agent", MY_AGENT)
    port = free_port()
    env = served_env(stub.api_url, port, COUNTERSIGN_GRAPH="my_agent:graph")
    events = f"http://127.0.0.1:{port}/slack/events"
    process = await start_serve(env, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"http://127.0.0.1:{port}/healthz", process)
            assert await signed_post(session, events, mention(REQUEST), "application/json") == 200
            [question] = await stub.wait_for("chat.postMessage", 1)
            assert question.payload["thread_ts"] == THREAD_TS  # the requester approves, there
            shown = all_text(question.blocks())
            assert "Order ID" in shown and "A-7" in shown  # the tool's own arguments
            assert f"Asked: “{REQUEST}”" in shown  # why the agent asks
            assert f"The agent says: “{REASON}”" in shown
            assert runs(tmp_path) == []
            click = click_payload(str(buttons(question.blocks())[0]["value"]))
            assert (
                await signed_post(session, events, click, "application/x-www-form-urlencoded")
                == 200
            )
            posts = await stub.wait_for("chat.postMessage", 2)
            await stub.wait_for("chat.update", 1)
    finally:
        code, _, err = await stop(process)
    assert code == 0, err
    assert posts[-1].payload["thread_ts"] == THREAD_TS
    assert posts[-1].payload["text"] == ANSWER
    assert runs(tmp_path) == ["A-7 30.00"]  # the tool ran once
    pause_ids = {str(buttons(question.blocks())[0]["value"])}
    assert_sent_valid(stub.calls, pause_ids)


UNSERVABLE = [
    ("nowhere", "COUNTERSIGN_GRAPH is malformed: module:attr"),
    ("no_such_module:graph", "COUNTERSIGN_GRAPH: the module no_such_module cannot be imported"),
    ("my_agent:nothing", "COUNTERSIGN_GRAPH: the module my_agent has no 'nothing'"),
    ("nothing:not_a_graph", "COUNTERSIGN_GRAPH: nothing:not_a_graph is not a compiled LangGraph"),
    ("nothing:graph", "COUNTERSIGN_GRAPH: nothing:graph has nothing to approve"),
    ("plain:graph", "COUNTERSIGN_GRAPH: plain:graph calls LangGraph's interrupt() with a value"),
]
AS_A_PROCESS = ("nowhere", "plain:graph")
"""Told before the heavy modules load, and after they did (the graph imported and checked)."""


def unservable_setup(folder: Path, graph: str) -> dict[str, str]:
    write(folder, "my_agent", MY_AGENT)
    write(folder, "nothing", NOTHING_TO_APPROVE)
    write(folder, "plain", PLAIN_GRAPH)
    return person_env(
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL="http://127.0.0.1:9/api/",  # never reached: the graph is refused first
        COUNTERSIGN_GRAPH=graph,
    )


def assert_refused(ran: Ran, graph: str, line: str) -> None:
    assert ran.code == 2, ran.err
    assert ran.err_lines[-1].startswith(line), ran.err_lines
    if graph in ("nothing:graph", "plain:graph"):
        assert "HumanInTheLoopMiddleware" in ran.err_lines[-1]
        assert "request_approval" in ran.err_lines[-1]


@pytest.mark.parametrize(
    ("graph", "line"), [case for case in UNSERVABLE if case[0] in AS_A_PROCESS]
)
def test_a_graph_that_cannot_be_served_is_one_line_and_exit_2(
    graph: str, line: str, tmp_path: Path
) -> None:
    env = unservable_setup(tmp_path, graph)

    assert_refused(python_m_bot("serve", cwd=tmp_path, env=env), graph, line)


@pytest.mark.parametrize(("graph", "line"), UNSERVABLE)
def test_every_graph_that_cannot_be_served_is_told_the_same_way(
    graph: str, line: str, tmp_path: Path
) -> None:
    """The same command, called in this process (a process per case costs seconds)."""
    env = unservable_setup(tmp_path, graph)

    assert_refused(python_m_bot_in_process("serve", cwd=tmp_path, env=env), graph, line)
