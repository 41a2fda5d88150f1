"""The spec's ``[benchmarks]`` section: the estimates an office publishes from the survey (a
weighted mean, overall or by groups), which the report computes on the original and the release."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from ..exceptions import ParameterError


@dataclass(frozen=True)
class Estimate:
    """One benchmark estimate: the variable whose weighted mean is taken and its groupings."""

    variable: str
    by: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Estimate:
        if not isinstance(text, str) or not text.strip():
            raise ParameterError(f"a benchmark estimate is written as \"VARIABLE\" or \"VARIABLE by GROUP\"; got {text!r}")
        variable, *groups = re.split(r"(?:^|\s)by(?:\s|$)", text.strip(), maxsplit=1)
        by = tuple(g.strip() for g in groups[0].split(",")) if groups else ()
        if not variable.strip() or any(not g for g in by):
            raise ParameterError(f"a benchmark estimate is written as \"VARIABLE\" or \"VARIABLE by GROUP\"; got {text!r}")
        return cls(variable.strip(), by)

    def __str__(self) -> str:
        return self.variable + (" by " + ", ".join(self.by) if self.by else "")


def parse_benchmarks(table: Mapping[str, Any], source: str) -> tuple[str, ...]:
    """``[benchmarks] estimates = ["income by urbrur", ...]``, each checked (one error naming the
    estimate), as written."""
    unknown = [key for key in table if key != "estimates"]
    if unknown:
        raise ParameterError(f"{source}: [benchmarks] takes only estimates; got {', '.join(map(repr, unknown))}")
    estimates = table.get("estimates", [])
    if not isinstance(estimates, list) or not all(isinstance(e, str) for e in estimates):
        raise ParameterError(f"{source}: [benchmarks] estimates is a list of texts such as \"income by urbrur\"; "
                             f"got {estimates!r}")
    for text in estimates:
        try:
            Estimate.parse(text)
        except ParameterError as exc:
            raise ParameterError(f"{source}: [benchmarks] {exc}") from None
    return tuple(e.strip() for e in estimates)
