"""Row fingerprints: recognise a record that is already in the state when rows have no key.

Without identifier columns nothing says whether an increment's row is a new person or a row
adjoined before (the same file added twice, the base added again). Copies of one record in a
group make the group's k rows fewer than k people, so the release's k-anonymity claim would be
false. Each stored row keeps a keyed 64-bit hash of everything the release publishes about it
(quasi-identifier values and the other columns); an increment row whose hash is already stored
is a duplicate. Values are normalised so that typing does not matter: numbers hash as float64
whether a file typed the column as integers, floats or number-shaped text ("7", "7.0"), and a
blank hashes as missing. Text that is not a plain number (a ZIP code "02134") hashes as text.
"""

from __future__ import annotations

import secrets

import numpy as np
import pandas as pd

# plain decimal numbers; a leading zero ("02134") marks a code, which stays text
_NUMBER = r"[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_MISSING = "\x00missing"


def new_key() -> str:
    """A per-state hash key (pandas' hash takes 16 characters)."""
    return secrets.token_hex(8)


def _canonical(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(float64 value or NaN, text or None) per row: exactly one of the two is set."""
    n = col.shape[0]
    if pd.api.types.is_bool_dtype(col.dtype):
        values = col.astype("float64").to_numpy(na_value=np.nan)
        return values, np.where(np.isnan(values), _MISSING, None).astype(object)
    if pd.api.types.is_numeric_dtype(col.dtype):
        values = col.astype("float64").to_numpy(na_value=np.nan) + 0.0  # -0.0 hashes as 0.0
        return values, np.where(np.isnan(values), _MISSING, None).astype(object)
    raw = col.to_numpy(dtype=object, na_value=None)
    text = pd.Series([None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in raw],
                     dtype=object)
    numeric = text.str.fullmatch(_NUMBER).fillna(False).to_numpy(bool)
    values = np.full(n, np.nan)
    if numeric.any():
        values[numeric] = text[numeric].astype("float64").to_numpy() + 0.0
    out = text.to_numpy(dtype=object).copy()
    out[numeric] = None
    missing = text.isna().to_numpy() | (text == "").to_numpy()
    out[missing] = _MISSING
    return values, out


def fingerprints(qi_values: np.ndarray, others: pd.DataFrame, key: str) -> np.ndarray:
    """One int64 fingerprint per row of (quasi-identifier values, other columns' values)."""
    # pandas keys only the hashing of text; a key column mixes the key into every row's hash
    parts: dict[str, object] = {"key": pd.Series([key] * qi_values.shape[0], dtype=object)}
    for j in range(qi_values.shape[1]):
        parts[f"q{j}"] = np.asarray(qi_values[:, j], dtype=np.float64) + 0.0
    for i, name in enumerate(others.columns):
        values, text = _canonical(others[name].reset_index(drop=True))
        parts[f"v{i}"] = values
        parts[f"t{i}"] = pd.Series(text, dtype=object)
    frame = pd.DataFrame(parts)
    hashed = pd.util.hash_pandas_object(frame, index=False, hash_key=key).to_numpy(np.uint64)
    return hashed.view(np.int64)


def distinct_per_group(labels: np.ndarray, prints: np.ndarray, n_groups: int) -> np.ndarray:
    """How many distinct records (fingerprints) each group holds."""
    pairs = pd.DataFrame({"g": labels, "f": prints}).drop_duplicates()
    return np.bincount(pairs["g"].to_numpy(), minlength=n_groups)
