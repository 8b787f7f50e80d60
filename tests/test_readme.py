"""Every Python block of README.md runs as printed, in one namespace (a later block may use an
earlier one's names, as a reader does), in a process of its own (as a person would run it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.cli.processes import StubThread

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[str]:
    return BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_readme_has_python_blocks() -> None:
    assert len(python_blocks()) >= 2


def test_every_python_block_of_the_readme_runs(tmp_path: Path) -> None:
    """ "Your agent in Slack" posts to Slack: here to the Web API stub (``SLACK_API_URL``)."""
    program = tmp_path / "readme_blocks.py"
    program.write_text("\n\n".join(python_blocks()), encoding="utf-8")
    with StubThread() as slack:
        env = {
            **os.environ,
            "SLACK_BOT_TOKEN": "xoxb-readme",
            "SLACK_SIGNING_SECRET": "readme-secret",
            "SLACK_API_URL": slack.api_url,
        }
        ran = subprocess.run(
            [sys.executable, str(program)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=env,
        )
        posted = [c.payload for c in slack.of("chat.postMessage")]
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "{'text': 'Refunded order 7.'}" in ran.stdout
    assert "{'order_id': '7', 'amount': 20.0}" in ran.stdout
    assert "not understood: 'approve if under 10', the question still waits" in ran.stdout
    assert "answered by manager-17 -> COMPLETED" in ran.stdout
    assert "AlreadyClosed" in ran.stdout
    assert "refunded 25.00 on order 9" in ran.stdout  # an attached agent, edited
    # your agent in Slack: asked in the approval channel, with why; its answer in the thread
    assert "PAUSED - It arrived broken, so I will refund it." in ran.stdout
    assert "COMPLETED - Refunded order A-7." in ran.stdout
    assert posted[0]["channel"] == "C0APPROVALS"
    assert (posted[-1]["channel"], posted[-1]["text"]) == ("C0GENERAL", "Refunded order A-7.")
