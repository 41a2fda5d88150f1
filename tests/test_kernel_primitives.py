"""The primitives the microaggregation kernels share (``microaggregation/_kernels.py``): top-k
insertion in (distance, id) order, the lower bound of a box, the growth of a group's SSE;
each against a brute force, and each defined once (the families' kernels call it instead of a
copy of their own)."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from numba import njit
from hypothesis import strategies as st

import incrowd
from incrowd.microaggregation._kernels import (
    box_sq_dist,
    growth_to_sums,
    insert_pair,
    join_growth,
    pair_enters,
    stable_argsort,
)

KERNELS = Path(__file__).resolve().parents[1] / "src" / "incrowd" / "microaggregation"



@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([-2.5, -0.0, 0.0, 1.0, 1e300, -1e-300, 3.0]) | st.floats(-1e6, 1e6), max_size=70),
       st.booleans())
def test_stable_argsort_is_numpys_merge_sort(values, descending):
    """The written-out merge sort MDAV's visiting order and Mondrian's tied rows use: numpy's
    stable argsort (of the negated values when descending), ties (0.0 and -0.0 among them) in
    index order."""
    d = np.array(values, dtype=np.float64)
    expected = np.argsort(-d if descending else d, kind="stable")
    np.testing.assert_array_equal(_stable_argsort(d, descending), expected)


@njit(cache=True)
def _stable_argsort(d, descending):
    return stable_argsort(d, descending)  # a helper kernel is called from kernels only


def _kernel_decorated(node: ast.AST) -> str | None:
    """'helper', 'njit' or None: how a function definition is compiled."""
    for dec in getattr(node, "decorator_list", []):
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("helper", "njit", "jit"):
            return name
    return None


def test_no_python_code_calls_a_helper_kernel():
    """A kernel built by ``helper`` has no entry point for Python, and a call from Python would
    crash the process instead of raising: only kernels may call one. Every name bound to a helper
    (defined or imported under that name) is checked in every Python function and module body of
    the package, the tests and the benchmarks."""
    roots = [Path(incrowd.__file__).parent, Path(__file__).parent, Path(__file__).parents[1] / "bench"]
    files = [p for root in roots for p in root.rglob("*.py") if "__pycache__" not in p.parts]
    trees = {p: ast.parse(p.read_text(), str(p)) for p in files}
    helpers = {}  # name -> the module defining it
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and _kernel_decorated(node) == "helper":
                helpers[node.name] = path.stem
    assert len(helpers) >= 30

    offenders = []
    for path, tree in trees.items():
        bound = {n for n, module in helpers.items() if module == path.stem}
        aliases = set()  # modules that define helpers, imported whole
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in helpers and helpers[alias.name] == (node.module or "").split(".")[-1]:
                        bound.add(alias.asname or alias.name)
                    if alias.name in set(helpers.values()):
                        aliases.add(alias.asname or alias.name)

        def visit(node, in_kernel):
            for child in ast.iter_child_nodes(node):
                inside = in_kernel or (isinstance(child, ast.FunctionDef) and _kernel_decorated(child) is not None)
                if isinstance(child, ast.Call) and not in_kernel:
                    f = child.func
                    if (isinstance(f, ast.Name) and f.id in bound) or (
                            isinstance(f, ast.Attribute) and f.attr in helpers and isinstance(f.value, ast.Name)
                            and f.value.id in aliases):
                        offenders.append(f"{path.name}:{child.lineno}")
                visit(child, inside)

        visit(tree, False)
    assert offenders == []

@settings(max_examples=80, deadline=None)
@given(cap=st.integers(1, 8), ds=st.lists(st.integers(0, 4), min_size=0, max_size=40), seed=st.integers(0, 2**32 - 1))
def test_insert_pair_keeps_the_smallest_pairs_in_distance_id_order(cap, ds, seed):
    # few distinct distances: ties everywhere; ids distinct, fed in a random order
    ids = np.random.default_rng(seed).permutation(len(ds))
    bd = np.empty(cap)
    bg = np.empty(cap, np.int64)
    filled = 0
    for d, g in zip(ds, ids):
        enters = pair_enters(bd, bg, filled, cap, float(d), int(g))
        kept = sorted(zip(bd[:filled], bg[:filled]))
        filled = insert_pair(bd, bg, filled, cap, float(d), int(g))
        assert enters == ((float(d), int(g)) in set(zip(bd[:filled], bg[:filled])))
        if not enters:
            assert sorted(zip(bd[:filled], bg[:filled])) == kept
    expected = sorted(zip(map(float, ds), map(int, ids)))[:cap]
    assert list(zip(bd[:filled], bg[:filled])) == expected


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_box_bound_is_the_distance_to_the_box(m, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, (5, m)).astype(float) + rng.random((5, m)) * (seed % 2)
    a, b = rng.normal(size=(2, 3, m))
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    for r in range(5):
        for node in range(3):
            bound = box_sq_dist(X, r, lo, hi, node)
            nearest = np.clip(X[r], lo[node], hi[node])  # the box's point closest to the row
            expected = 0.0
            for j in range(m):  # column order, as the kernels sum
                diff = X[r, j] - nearest[j]
                expected += diff * diff
            assert bound == expected
            inside = lo[node] + rng.random((50, m)) * (hi[node] - lo[node])
            assert (((inside - X[r]) ** 2).sum(axis=1) >= bound * (1 - 1e-12)).all()


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 12), m=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_group_growth_is_the_rise_of_the_groups_sse(size, m, seed):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(size, m))
    x = rng.normal(size=(1, m)) * 3

    def sse(rows):
        return float(((rows - rows.mean(axis=0)) ** 2).sum())

    rise = sse(np.vstack([G, x])) - sse(G)
    sums = G.sum(axis=0)[None, :]
    sizes = np.array([size], np.int64)
    assert np.isclose(growth_to_sums(x, 0, sums, sizes, 0), rise, rtol=1e-9, atol=1e-12)
    assert np.isclose(join_growth(size, float(((x[0] - G.mean(axis=0)) ** 2).sum())), rise, rtol=1e-9, atol=1e-12)


# the modules whose kernels search by (distance, id), by boxes, or grow groups by SSE (the grid
# index of ``greedy/_grid.py`` keeps its own insertion and growth: with the shared ones, MDAV* on
# three columns ran measurably slower)
USERS = ["_kernels.py", "ona/_ona_kernel.py", "ona/_ona_star_fast.py", "greedy/_fixed_center.py",
         "greedy/_mdav_star_screened.py", "joint/_joint_kernels.py"]


# a copy written out: a loop shifting sorted distances and ids together, a box bound's sum, a
# growth factor |G| / (|G| + 1) times a distance (or a distance times it)
COPIES = (r"\w+\[pos\] = \w+\[pos - 1\]\s+\w+\[(?:\w+, )?pos\] = \w+\[(?:\w+, )?pos - 1\]",
          r"lb \+= diff \* diff",
          r"(\w+(?:\[\w+\])?) / \(\1 \+ 1\.0\) \*",
          r"\w+ \*= \w+ / \(\w+ \+ 1\.0\)")


#: copies kept on purpose, each measured slower through the shared primitive: MDAV's scan for
#: the k - 1 nearest (its hot loop) and the joint clustering's neighbour lists (a buffer of 128
#: groups, filled so often that the call shows)
KEPT = {("_kernels.py", "nearest_alive"), ("joint/_joint_kernels.py", "neighbour_groups")}


def test_each_primitive_is_defined_once_and_used_by_the_families():
    """No family keeps a copy: no top-k insertion of its own (a function, or a loop shifting
    sorted distances and ids together), no box bound written out, no growth factor
    |G| / (|G| + 1) written out."""
    copies = []
    for name in USERS:
        text = (KERNELS / name).read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in ("_insert_top", "_insert_pair", "_before"):
                copies.append(f"{name}: def {node.name}")
        body = text if name != "_kernels.py" else text.split("def insert_pair(")[0]
        for node in ast.walk(tree):  # a copy kept on purpose (see KEPT) is left out
            if isinstance(node, ast.FunctionDef) and (name, node.name) in KEPT:
                body = body.replace(ast.get_source_segment(text, node), "")
        for pattern in COPIES:
            if name == "_kernels.py" and pattern.startswith("lb"):
                continue
            for hit in re.findall(pattern, body):
                copies.append(f"{name}: {pattern} ({hit})")
    assert copies == []
    for name in USERS[1:]:
        assert "from .._kernels import" in (KERNELS / name).read_text(encoding="utf-8"), name


def _params(fn):
    return len(inspect.signature(getattr(fn, "py_func", fn)).parameters)


def test_the_per_block_kernels_take_workspaces_not_dozens_of_arrays():
    """The functions at the boundary of a blocked pass take the workspaces built once per run
    (their hot loops then run on the arrays unpacked once)."""
    from incrowd.microaggregation.greedy import _mdav_star_screened
    from incrowd.microaggregation.ona import _ona_star_fast as f

    wide = {fn.__name__: _params(fn) for fn in (f._prefetch, f._lists_for, f._lists_for_parallel, f._one_block,
                                                 f._lists_block, f._lists_block_single, f._update_block,
                                                 f._update_block_single, f._split_star, f._grown,
                                                 _mdav_star_screened._lists_pass)}
    assert {name: n for name, n in wide.items() if n > 16} == {}


def test_the_fast_ona_star_kernel_is_split_into_named_phases():
    """No function of the fast ONA* module runs past 100 lines; the kernel reads as its phases."""
    tree = ast.parse((KERNELS / "ona/_ona_star_fast.py").read_text(encoding="utf-8"))
    long = {n.name: n.end_lineno - n.lineno + 1 for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and n.end_lineno - n.lineno + 1 > 100}
    assert long == {}
    kernel = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "ona_star_fast_kernel")
    called = {c.func.id for c in ast.walk(kernel) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
    assert {"_start", "_refresh", "_dissolve_phase", "_reassign_phase", "_labels_of"} <= called
