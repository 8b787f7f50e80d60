"""What a fuzz run answered: requests counted by door and by status, for the assertions and for
the summary the test prints (``pytest -s`` shows it)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Tally:
    """Every answer of a run, by ``(door, status)``; the shapes that got each 5xx."""

    counts: Counter[tuple[str, int]] = field(default_factory=Counter)
    server_errors: list[tuple[str, str]] = field(default_factory=list)
    """``(door, shape)`` of every request answered 5xx."""

    def record(self, door: str, shape: str, status: int) -> None:
        self.counts[(door, status)] += 1
        if status >= 500:
            self.server_errors.append((door, shape))

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def statuses(self, door: str) -> dict[int, int]:
        return {status: n for (d, status), n in sorted(self.counts.items()) if d == door}

    def summary(self) -> str:
        """One line per door: ``door: N requests (status×count, ...)``."""
        doors = sorted({door for door, _ in self.counts})
        lines = []
        for door in doors:
            statuses = self.statuses(door)
            shown = ", ".join(f"{status}×{n}" for status, n in statuses.items())
            lines.append(f"{door}: {sum(statuses.values())} requests ({shown})")
        return "\n".join(lines)
