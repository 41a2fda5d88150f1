"""The spec's ``[[perturb]]`` steps: parsed and checked against ``[columns]``, applied to a
release after its keys are protected, and written back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from .._runtime import lazy as _lazy
from ..exceptions import ParameterError, name_list

if TYPE_CHECKING:
    from ..perturbation import Step

# the perturbation methods load where a spec has [[perturb]] steps
check_steps = _lazy.function("incrowd.perturbation", "check_steps")
step_report = _lazy.function("incrowd.perturbation", "StepReport")


def parse_perturb(raw: Any, columns: Mapping[str, Any], root: Path, source: str) -> tuple[Step, ...]:
    """``[[perturb]]`` as given (a list of tables), checked: the method's own keys, and the columns
    a step changes each with the role ``"perturb"`` (a perturbed column is never a
    quasi-identifier: the keys' release and its check are those of the spec without it)."""
    roles = {name: getattr(spec, "role", spec) for name, spec in columns.items()}
    if raw is None:
        _check_all_perturbed(roles, (), source)
        return ()
    if isinstance(raw, Mapping) or not isinstance(raw, (list, tuple)):
        raise ParameterError(f"{source}: perturb must be a list of steps, each a [[perturb]] table with columns "
                             "and method")
    given = []
    for step in raw:
        # a matrix file is read from the spec's folder, as a hierarchy file is
        if isinstance(step, Mapping) and isinstance(step.get("matrix"), str):
            step = {**step, "matrix": str(root / step["matrix"])}
        if isinstance(step, Mapping) and step.get("method") == "record_swap" and "household" not in step:
            households = [name for name, role in roles.items() if role == "household"]
            if len(households) == 1:
                step = {**step, "household": households[0]}
        given.append(step)
    steps = tuple(check_steps(given, f"{source}: [[perturb]]"))
    for i, step in enumerate(steps, 1):
        wrong = [c for c in step.method.changed_columns() if roles.get(c) != "perturb"]
        if wrong:
            shown = ", ".join(f"{c!r} ({roles[c]})" if c in roles else f"{c!r} (not in [columns])" for c in wrong)
            raise ParameterError(f"{source}: [[perturb]] step {i} ({step.key}) changes {shown}; a perturbed column "
                                 f"has the role \"perturb\" in [columns] (e.g. {wrong[0]} = \"perturb\")")
    _check_all_perturbed(roles, steps, source)
    return steps


def _check_all_perturbed(roles: Mapping[str, str], steps: tuple[Step, ...], source: str) -> None:
    """A column given the role "perturb" that no step changes would be published as it is."""
    changed = {c for step in steps for c in step.method.changed_columns()}
    idle = [name for name, role in roles.items() if role == "perturb" and name not in changed]
    if idle:
        raise ParameterError(f"{source}: {name_list(idle)} have the role \"perturb\" but no [[perturb]] step changes "
                             "them; add a step, or give them the role \"other\" to publish them as they are")


def steps_to_dicts(steps: tuple[Step, ...]) -> list[dict[str, Any]]:
    """The steps as a spec writes them back (what :func:`parse_perturb` reads)."""
    return [dict(step.given) for step in steps]


def apply_steps(table: pd.DataFrame, steps: tuple[Step, ...], strata: list[str],
                random_state: int | None) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """The release's table with the steps applied in order (per stratum of ``strata``), its
    statistical file's metadata kept (a perturbed column keeps its labels, measure and format),
    and one summary per step."""
    from ..perturbation import perturb

    missing = [c for c in strata if c not in table.columns]
    if missing:
        raise ParameterError(f"the strata {name_list(missing)} are not in the release")
    result = perturb(table, list(steps), strata=strata or None, random_state=random_state)
    out = result.table
    out.attrs = table.attrs
    return out, result.summary()


#: the steps whose every cell is a function of that cell alone: a partitioned file runs them
#: partition by partition with the in-process result
ROW_BY_ROW = ("top_code", "bottom_code", "round")


def whole_column_steps(steps: tuple[Step, ...]) -> list[str]:
    """The methods of ``steps`` that read more than the cell they change (ranks, a regression,
    groups or a random stream over all rows), once each in order."""
    return list(dict.fromkeys(step.key for step in steps if step.key not in ROW_BY_ROW))


def combined_steps(parts: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The steps' summaries of a release perturbed part by part (each part's
    :func:`apply_steps` summaries, one list per part): cells, coded values and seconds added up."""
    out = []
    for reports in zip(*parts):
        first = reports[0]
        details = {key: sum(r[key] for r in reports) for key in ("top_coded", "bottom_coded") if key in first}
        step = step_report(first["method"], list(first["columns"]), sum(r["cells_changed"] for r in reports), details,
                          sum(r["seconds"] for r in reports))
        out.append(step.to_dict())
    return out
