"""Validation problem records and the error raised for an unusable task."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Problem(BaseModel):
    """One validation finding.

    Attributes:
        file: display path of the offending file or directory (relative to the current
            directory when below it, else absolute).
        where: JSON path inside the file (``rubrics[3].weight``) or None.
        message: what is wrong, with the offending value.
        severity: ``error`` makes the task invalid; ``warning`` does not.
    """

    model_config = ConfigDict(frozen=True)

    file: str
    where: str | None = None
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        head = f"{self.file}: {self.where}: " if self.where else f"{self.file}: "
        tag = "" if self.severity == "error" else "warning: "
        return head + tag + self.message


class TaskLoadError(ValueError):
    """Raised when a task cannot be loaded; ``problems`` lists every error found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def warnings_report(problems: list[Problem]) -> list[str]:
    """Lines telling a user what loading a dataset skipped or ignored: a heading, then one
    indented line per problem (``<file>: <json path>: warning: <message>``). Used by
    ``jobbench run`` and ``jobbench grade`` before they start.

    Returns:
        The lines (plain text, no markup); empty when ``problems`` is empty.
    """
    if not problems:
        return []
    head = (
        f"{len(problems)} thing(s) in the dataset are skipped or ignored, as the public "
        "tools do (--strict refuses them):"
    )
    return [head] + [f"  {p}" for p in problems]
