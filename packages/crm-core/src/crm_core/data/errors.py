"""Validation problems that point at the exact place in the input: file, line, field, what was expected."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input row."""

    file: str
    line: int | None  # 1-based line (JSON lines) or item number (JSON arrays); None for whole-file problems
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class DataValidationError(ValueError):
    """Raised when input data is invalid; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem], shown: int = 20):
        self.problems = problems
        lines = [str(p) for p in problems[:shown]]
        if len(problems) > shown:
            lines.append(f"... and {len(problems) - shown} more problem(s)")
        super().__init__("\n".join(lines))
