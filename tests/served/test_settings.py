"""The served graphs' settings: each bad one is one line naming it, before anything heavy."""

from __future__ import annotations

import pytest

from bot import SettingsError
from bot.desk.settings import load_served_settings
from bot.served.targets import GraphTarget, ServedSettings, SuggestedPrompt

SLACK = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}


def test_unset_serves_no_graph() -> None:
    assert load_served_settings(SLACK, env_file=None, slack=True) is None


def test_graphs_approvers_and_prompts_are_read() -> None:
    environ = {
        **SLACK,
        "COUNTERSIGN_GRAPH": "my_agent:graph, agents.refunds:make_graph",
        "COUNTERSIGN_APPROVAL_CHANNEL": "C0APPROVALS",
        "COUNTERSIGN_APPROVERS": "U0BOSS,S0FINANCE",
        "COUNTERSIGN_ASSISTANT_PROMPTS": "Refund=Refund order 7 | Lunch = Book lunch, 86.50",
    }

    assert load_served_settings(environ, env_file=None, slack=True) == ServedSettings(
        graphs=(
            GraphTarget(module="my_agent", attribute="graph"),
            GraphTarget(module="agents.refunds", attribute="make_graph"),
        ),
        approval_channel="C0APPROVALS",
        approvers=("U0BOSS", "S0FINANCE"),
        prompts=(
            SuggestedPrompt(title="Refund", message="Refund order 7"),
            SuggestedPrompt(title="Lunch", message="Book lunch, 86.50"),
        ),
    )


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        ({"COUNTERSIGN_GRAPH": "my_agent"}, "COUNTERSIGN_GRAPH is malformed: module:attr"),
        ({"COUNTERSIGN_GRAPH": "my-agent:graph"}, "COUNTERSIGN_GRAPH is malformed"),
        (
            {"COUNTERSIGN_APPROVERS": "U0BOSS"},
            "COUNTERSIGN_APPROVAL_CHANNEL is missing: COUNTERSIGN_APPROVERS answer in a Slack",
        ),
        ({"COUNTERSIGN_APPROVAL_CHANNEL": "#ops"}, "COUNTERSIGN_APPROVAL_CHANNEL is malformed"),
        ({"COUNTERSIGN_APPROVERS": "bob"}, "COUNTERSIGN_APPROVERS is malformed"),
        (
            {"COUNTERSIGN_ASSISTANT_PROMPTS": "just a message"},
            "COUNTERSIGN_ASSISTANT_PROMPTS is malformed: title=message pairs separated by |",
        ),
        (
            {"COUNTERSIGN_ASSISTANT_PROMPTS": "|".join(f"t{n}=m{n}" for n in range(5))},
            "COUNTERSIGN_ASSISTANT_PROMPTS is malformed: at most 4 prompts",
        ),
        ({"COUNTERSIGN_APP": "x:Y"}, "COUNTERSIGN_GRAPH and COUNTERSIGN_APP are both set"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(extra: dict[str, str], line: str) -> None:
    environ = {**SLACK, "COUNTERSIGN_GRAPH": "my_agent:graph", **extra}

    with pytest.raises(SettingsError) as refused:
        load_served_settings(environ, env_file=None, slack=True)

    assert refused.value.message.startswith(line)
    assert "\n" not in refused.value.message
