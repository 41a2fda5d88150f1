"""distinct l and t as the privacy models negotiate takes them (tests written with thresholds)."""

from __future__ import annotations

from incrowd.privacy import DistinctL, TCloseness


def thresholds(l=None, t=None) -> list:
    """``[DistinctL(l), TCloseness(t)]``, those given."""
    return ([DistinctL(l)] if l is not None else []) + ([TCloseness(t)] if t is not None else [])


def as_models(request: dict) -> dict:
    """A request written with the web's fields ``l`` and ``t`` as negotiate takes it: those two
    as models (after any given)."""
    out = {key: value for key, value in request.items() if key not in ("l", "t")}
    out["models"] = [*thresholds(request.get("l"), request.get("t")), *out.get("models", ())]
    return out
