"""The check of a written file runs the privacy models of ``incrowd.privacy``: ``incrowd.io`` reads
the file back and hands the table to the check the caller built, without knowing k, l or t.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.exceptions import VerificationError

SRC = Path(__file__).resolve().parents[1] / "src" / "incrowd"


def test_a_promise_carries_any_model_and_the_written_file_is_refused_when_it_fails(tmp_path):
    from incrowd.io import Promise, write_release
    from incrowd.privacy import EntropyL, KAnonymity, ReleaseCheck

    # every class holds 2 distinct values, but 'b' holds them 3 to 1: entropy 1.9 fails there
    frame = pd.DataFrame({"q": ["a"] * 4 + ["b"] * 4, "s": ["x", "y"] * 2 + ["x", "x", "x", "y"]})
    check = ReleaseCheck((KAnonymity(2), EntropyL(1.9)), sensitive=("s",))
    out = tmp_path / "release.csv"
    with pytest.raises(VerificationError) as info:
        write_release(frame, out, Promise(("q",), check=check))
    message = str(info.value)
    assert "the written file" in message and "entropy 1.9-diverse in 's'" in message
    assert "data row 5 (q=b)" in message and message.endswith("nothing was written")
    assert not out.exists()
    record = write_release(frame, out, Promise(("q",), check=ReleaseCheck((KAnonymity(2), EntropyL(1.5)),
                                                                          sensitive=("s",))))
    assert record.ok and record["verified_on"] == "written file"
    assert record["promise"]["models"] == ["2-anonymous", "entropy 1.5-diverse in 's'"]
    assert record["entropy_l"]["s"]["ok"] is True


def test_the_written_file_check_with_a_blank_matching_any_value():
    from incrowd.io import Promise, verify_frame
    from incrowd.privacy import KAnonymity, ReleaseCheck

    table = pd.DataFrame({"a": ["x", "", "y", "y"], "b": ["1", "1", "2", "2"]})
    wildcard = ReleaseCheck((KAnonymity(2),), missing_matches="any")
    got = verify_frame(table, Promise(("a", "b"), check=wildcard), what="t")
    assert got["k_anonymity"]["ok"] and got["promise"]["missing_matches"] == "any"
    with pytest.raises(VerificationError, match="not 2-anonymous"):
        verify_frame(table, Promise(("a", "b"), check=ReleaseCheck((KAnonymity(2),))), what="t")
    with pytest.raises(VerificationError, match=r"matching any value: data row 1 \('x', '1'\) matches 2 row"):
        verify_frame(table, Promise(("a", "b"), check=ReleaseCheck((KAnonymity(3),), missing_matches="any")),
                     what="t")


@st.composite
def _tables(draw):
    n = draw(st.integers(1, 25))
    a = draw(st.lists(st.sampled_from(["x", "y", None]), min_size=n, max_size=n))
    b = draw(st.lists(st.sampled_from([1.0, 2.0, None]), min_size=n, max_size=n))
    return pd.DataFrame({"a": pd.Series(a, dtype=object), "b": b})


@settings(max_examples=80, deadline=None)
@given(frame=_tables(), k=st.integers(2, 4))
def test_check_table_counts_k_with_a_blank_matching_any_value_as_sdcmicro(frame, k):
    from incrowd.privacy import KAnonymity, check_table
    from incrowd.values import match_counts

    # sdcMicro's freqCalc: a row matches another where each quasi-identifier is equal or missing in
    # either; a row missing everywhere matches all, and counts for no row missing nowhere
    rows = frame.astype(object).where(frame.notna(), None).to_numpy().tolist()

    def counts(r, s) -> bool:
        if all(x is None for x in r):
            return True
        if all(x is not None for x in r) and all(y is None for y in s):
            return False
        return all(x is None or y is None or x == y for x, y in zip(r, s))

    matches = [sum(counts(r, s) for s in rows) for r in rows]
    assert match_counts(frame, ["a", "b"], missing_matches="any").tolist() == matches
    failures = check_table(frame, ["a", "b"], [KAnonymity(k)], missing_matches="any")
    assert (not failures) == (min(matches) >= k)
    if failures:
        assert failures[0].n_rows == sum(m < k for m in matches)
        assert failures[0].row == 1 + next(i for i, m in enumerate(matches) if m < k)


def _imports_of(package: str) -> list[str]:
    found = []
    for path in (SRC / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = [package] + list(path.relative_to(SRC / package).parts[:-1])
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(["incrowd", *base, *([node.module] if node.module else [])])
                found += [f"{path.name}: {target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("incrowd"):
                found += [f"{path.name}: {node.module}.{a.name}" for a in node.names]
    return found


def test_io_reads_back_without_knowing_the_privacy_models_or_the_measures():
    # io sits below the privacy models: it runs the check it is given
    wrong = [f for f in _imports_of("io")
             if f.split(": ")[1].startswith(("incrowd.privacy", "incrowd.metrics", "incrowd.publishing"))]
    assert not wrong, wrong


def test_the_check_orders_t_as_the_file_holds_the_values(tmp_path):
    from incrowd.io import Promise, write_release
    from incrowd.privacy import KAnonymity, ReleaseCheck, TCloseness

    # numbers in memory, text in a CSV: "10" must still follow "9" in the ordered distance
    frame = pd.DataFrame({"q": ["a"] * 3 + ["b"] * 3, "s": np.array([1, 9, 10, 1, 9, 10], dtype=np.int64)})
    check = ReleaseCheck((KAnonymity(2), TCloseness(0.01)), sensitive=("s",), ordered={"s": True},
                         reference=frame[["s"]])
    record = write_release(frame, tmp_path / "r.csv", Promise(("q",), check=check))
    assert record["t_closeness"]["s"]["ok"] and record["t_closeness"]["s"]["ordered"] is True


def test_the_verified_lines_name_every_model_the_written_file_met(tmp_path):
    from incrowd.io import Promise, write_release
    from incrowd.privacy import EntropyL, KAnonymity, ReleaseCheck, verified_lines
    from incrowd.web._publish import verification_lines

    frame = pd.DataFrame({"q": ["a"] * 4 + ["b"] * 4, "s": ["x", "y"] * 4})
    check = ReleaseCheck((KAnonymity(2), EntropyL(1.5)), sensitive=("s",))
    record = write_release(frame, tmp_path / "r.csv", Promise(("q",), check=check))
    lines = verified_lines(record)
    assert lines == ["k-anonymous over all quasi-identifiers (k=2): smallest class 4 rows",
                     "entropy 1.5-diverse in 's' (held)"]
    # the web's Publish page and the report's HTML page show the same lines
    assert verification_lines({"verification": record}) == lines


def test_the_publish_summary_names_the_models_as_the_check_does(tmp_path):
    import incrowd
    from incrowd.cli._publish import summary_lines

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"sex": rng.choice(["f", "m"], 60), "disease": rng.choice(["flu", "cold", "hiv"], 60)})
    result = incrowd.publish(frame, {"privacy": {"k": 2, "l": 2, "allow_full_suppression": True},
                                     "columns": {"sex": "categorical", "disease": "sensitive"}})
    lines = dict(summary_lines(result.summary()))
    assert lines["privacy"] == "2-anonymous, distinct 2-diverse in 'disease'; sensitive: disease"
    assert lines["verified"].startswith("every model above") and lines["verified"].endswith("before writing")


def test_a_verifier_record_that_fails_refuses_the_file_even_where_the_models_pass(monkeypatch):
    import dataclasses

    import incrowd.privacy._written as written
    from incrowd.io import Promise, verify_frame
    from incrowd.privacy import DistinctL, KAnonymity, ReleaseCheck

    real = written.verify_l_diversity
    monkeypatch.setattr(written, "verify_l_diversity",
                        lambda *a, **kw: dataclasses.replace(real(*a, **kw), ok=False, min_distinct=1))
    table = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": ["x", "y", "x", "y"]})
    check = ReleaseCheck((KAnonymity(2), DistinctL(2)), sensitive=("s",))
    with pytest.raises(VerificationError, match="not 2-diverse in 's'"):
        verify_frame(table, Promise(("q",), check=check), what="the release")
