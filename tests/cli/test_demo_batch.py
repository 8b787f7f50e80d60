"""``approve all`` at the demo's prompt: the terminal lists the questions waiting and approves
them in one batch (``App.answer_all``), each one settled on its own in the audit trail."""

from __future__ import annotations

import pytest

from bot.cli.terminal import OWNER_ID
from tests.cli.test_demo import audit_trail, run_demo


def test_approve_all_lists_and_approves_every_waiting_question(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_demo(monkeypatch, "approve all\n")

    out = capsys.readouterr().out
    assert code == 0, out
    assert "Approving the 2 questions waiting:" in out
    assert '  - refund-card-tool {"order_id": "A-1001", "amount": 120.0}' in out
    assert '  - book-expense-tool {"purpose": "team lunch", "amount": 86.5}' in out
    assert audit_trail(out) == [
        f"1. refund-card-tool: REPLIED by {OWNER_ID}: approved",
        f"2. book-expense-tool: REPLIED by {OWNER_ID}: approved",
    ]
