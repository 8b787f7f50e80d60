"""Each labelled series is looked up once per App: ``labels`` checks and locks on every call,
and the pause cycle counts a pass, a model call and an answer several times over."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from bot.core.metrics import Metrics
from bot.testing import FakeClock


def _sample(metrics: Metrics, name: str, labels: dict[str, str]) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


async def test_a_series_is_labelled_once_and_still_counts_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    metrics = Metrics(FakeClock())
    labelled: list[tuple[str, ...]] = []
    real = metrics.passes.labels

    def counting(*values: str, **named: str) -> Any:
        labelled.append(values + tuple(named.values()))
        return real(*values, **named)

    monkeypatch.setattr(metrics.passes, "labels", counting)
    for _ in range(3):
        metrics.pass_ran("rested", timedelta(milliseconds=5))
    metrics.pass_ran("completed", timedelta(milliseconds=5))

    assert labelled == [("rested",), ("completed",)]  # once per series, not per pass
    assert _sample(metrics, "countersign_passes_total", {"outcome": "rested"}) == 3.0
    assert _sample(metrics, "countersign_passes_total", {"outcome": "completed"}) == 1.0


async def test_two_apps_count_apart() -> None:
    first, second = Metrics(FakeClock()), Metrics(FakeClock())
    first.model_call("agent", "ok", cost=0.5)
    first.model_call("agent", "ok", cost=0.25)
    second.model_call("agent", "ok")
    first.answered("approved")
    first.answer_time("refund-role", "approved", timedelta(seconds=2))

    calls = {"caller": "agent", "outcome": "ok"}
    assert _sample(first, "countersign_model_calls_total", calls) == 2.0
    assert _sample(second, "countersign_model_calls_total", calls) == 1.0
    assert _sample(first, "countersign_model_spend_total", {"caller": "agent"}) == 0.75
    assert _sample(second, "countersign_model_spend_total", {"caller": "agent"}) is None
    answers = {"outcome": "approved", "code": ""}
    assert _sample(first, "countersign_answers_total", answers) == 1.0
    waited = {"role": "refund-role", "resolution": "approved"}
    assert _sample(first, "countersign_time_to_answer_seconds_count", waited) == 1.0
