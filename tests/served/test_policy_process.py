"""``COUNTERSIGN_POLICY=my_rules:small_refunds`` beside ``COUNTERSIGN_GRAPH``: the served graph's
questions are decided by the policy first — a refund under 50 approves itself (the tool runs
once, the requester is told in their thread why), as a process against the Web API stub; a
policy that cannot be loaded is one line naming the setting, exit 2."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from tests.cli.processes import person_env, python_m_bot, python_m_bot_in_process
from tests.ports import free_port
from tests.served.modules import ANSWER, MY_AGENT, REQUEST, runs, write
from tests.served.test_slack_process import THREAD_TS, mention, served_env
from tests.slack.conftest import SECRET
from tests.slack.stub import SlackStub
from tests.slack.test_serve import signed_post, start_serve, stop, wait_healthy

MY_RULES = """
from bot import approve_below

small_refunds = approve_below("amount", 50, name="small-refund-policy")
not_a_policy = 42
"""


async def test_a_served_graph_s_small_refund_approves_itself_by_the_policy_setting(
    stub: SlackStub, tmp_path: Path
) -> None:
    write(tmp_path, "my_agent", MY_AGENT)
    write(tmp_path, "my_rules", MY_RULES)
    port = free_port()
    env = served_env(
        stub.api_url,
        port,
        COUNTERSIGN_GRAPH="my_agent:graph",
        COUNTERSIGN_POLICY="my_rules:small_refunds",
    )
    events = f"http://127.0.0.1:{port}/slack/events"
    process = await start_serve(env, tmp_path)
    try:
        async with aiohttp.ClientSession() as session:
            await wait_healthy(session, f"http://127.0.0.1:{port}/healthz", process)
            assert await signed_post(session, events, mention(REQUEST), "application/json") == 200
            told, answer = await stub.wait_for("chat.postMessage", 2)
    finally:
        code, _, err = await stop(process)
    assert code == 0, err
    assert told.payload["thread_ts"] == THREAD_TS  # never a question: the requester is told
    assert told.payload["text"].endswith(
        "was approved automatically by small-refund-policy: under 50.00"
    )
    assert (answer.payload["thread_ts"], answer.payload["text"]) == (THREAD_TS, ANSWER)
    assert runs(tmp_path) == ["A-7 30.00"]  # the tool ran once


UNLOADABLE = [
    ("my_rules", "COUNTERSIGN_POLICY is malformed: module:attr"),
    ("no_rules:policy", "COUNTERSIGN_POLICY: the module no_rules cannot be imported"),
    ("my_rules:not_a_policy", "COUNTERSIGN_POLICY: my_rules:not_a_policy is not a @policy"),
    ("my_rules:nothing", "COUNTERSIGN_POLICY: my_rules:nothing is not a @policy"),
]
AS_A_PROCESS = ("my_rules", "my_rules:not_a_policy")
"""Told before the heavy modules load, and after they did (the policy imported and checked)."""


def unloadable_setup(folder: Path, setting: str) -> dict[str, str]:
    write(folder, "my_agent", MY_AGENT)
    write(folder, "my_rules", MY_RULES)
    return person_env(
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL="http://127.0.0.1:9/api/",  # never reached: the policy is refused first
        COUNTERSIGN_GRAPH="my_agent:graph",
        COUNTERSIGN_POLICY=setting,
    )


@pytest.mark.parametrize(
    ("setting", "line"), [case for case in UNLOADABLE if case[0] in AS_A_PROCESS]
)
def test_a_policy_setting_that_cannot_be_loaded_is_one_line_and_exit_2(
    setting: str, line: str, tmp_path: Path
) -> None:
    ran = python_m_bot("serve", cwd=tmp_path, env=unloadable_setup(tmp_path, setting))

    assert ran.code == 2, ran.err
    assert ran.err_lines[-1].startswith(line), ran.err_lines


@pytest.mark.parametrize(("setting", "line"), UNLOADABLE)
def test_every_policy_setting_that_cannot_be_loaded_is_told_the_same_way(
    setting: str, line: str, tmp_path: Path
) -> None:
    """The same command, called in this process (a process per case costs seconds)."""
    env = unloadable_setup(tmp_path, setting)

    ran = python_m_bot_in_process("serve", cwd=tmp_path, env=env)

    assert ran.code == 2, ran.err
    assert ran.err_lines[-1].startswith(line), ran.err_lines
