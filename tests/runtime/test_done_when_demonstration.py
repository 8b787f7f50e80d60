"""Issue 29's "Done when" demonstration runs as a person runs it and says what it should: the
routed wire needs two distinct approvers (the requester refused), the delegate's and the
reassigned person's answers are audited as handovers, and the batch of five approves four and
skips the one answered elsewhere, each tool once."""

from __future__ import annotations

import io
import json

from tests.demonstrations.four_eyes_done_when import main


async def test_the_demonstration_shows_each_part_with_its_audit_entries() -> None:
    out = io.StringIO()
    await main(out)
    text = out.getvalue()
    audits = [
        json.loads(line.removeprefix("    audit: "))
        for line in text.splitlines()
        if line.startswith("    audit: ")
    ]
    wire, delegated, reassigned, *batch = audits
    assert [a["by"] for a in wire["approvals"]] == ["U0ANN", "U0BOB"]
    assert "the requester approves: Refused (pause.self-approval)" in text
    assert delegated["handovers"] == [{"by": "U0MANAGER", "kind": "delegation", "to": "U0DEPUTY"}]
    assert delegated["responder"] == "U0DEPUTY"
    assert reassigned["handovers"][0]["kind"] == "reassigned"
    assert reassigned["responder"] == "U0BOBBY"
    assert [a["responder"] for a in batch] == ["U0MANAGER"] * 2 + ["U0COLLEAGUE"] + [
        "U0MANAGER"
    ] * 2
    assert text.count("waiting: done-when-refund-tool") == 5
    assert "A-1003: skipped: answered elsewhere" in text
    assert "tools run by the batch: 4 (and 1 elsewhere)" in text
