"""The one place benchmarks may import internals from; not public API.

The scripts under ``bench/`` measure the public API (``import incrowd``) wherever they can. A few
must reach below it: the paper reproductions drive a kernel with a rule the estimators do not
expose, the memory bench times a kernel without its estimator, the publish and report benches
compute a measure on their own, the start-up bench imitates what the CLI does in one process.
They import those names from here, and only from here, so that moving or renaming an internal
module means changing one line below instead of a dozen scripts, and so that a grep for
``_bench_entry`` lists every place a benchmark depends on an internal.

Nothing here is a promise: names come and go with the benchmarks that need them. Each name is
loaded on first use (``module.NAME``), so importing this module loads no kernel and compiles
nothing.
"""

from __future__ import annotations

from importlib import import_module

#: name -> the internal module that defines it (today's module paths)
_SOURCES: dict[str, str] = {
    # file writing (bench/_common/output.py)
    "atomic_output": "incrowd.io._atomic",
    "write_text_atomic": "incrowd.io._atomic",
    # standardization as the estimators do it (the reproductions and speed benches)
    "standardize": "incrowd.values._standardize",
    # numba's compile clock (reproduce_refine.py, scale_out.py)
    "compile_clock": "incrowd._runtime._compile",
    # exact MDAV: the plain scan kernel (the compiled extension's; numba's copy beside it for
    # aot_vs_numba.py) and the fast exact kernel (bench_speed.py, bench_memory.py, bench_ablation.py)
    "mdav_labels": "incrowd._native",
    "mdav_labels_jit": "incrowd.microaggregation.mdav._mdav_kernel:mdav_labels",
    "mdav_fast_labels": "incrowd.microaggregation.mdav._mdav_fast",
    # the building blocks the F-MDAV variants share with the scan kernel (bench/_fmdav_variants.py)
    "nearest_alive": "incrowd.microaggregation._kernels",
    "rest_group": "incrowd.microaggregation._kernels",
    # MDAV* through the grid index (bench_memory.py)
    "mdav_star_fast_labels": "incrowd.microaggregation.greedy._mdav_star_fast",
    # Mondrian with an explicit cut rule (reproduce_mondrian.py, reproduce_table6.py, scale_out.py)
    "mondrian_labels": "incrowd.microaggregation.mondrian._mondrian_kernel",
    "RULE_RANGE": "incrowd.microaggregation.mondrian._mondrian_kernel",
    "RULE_VARIANCE": "incrowd.microaggregation.mondrian._mondrian_kernel",
    "RULE_V2D": "incrowd.microaggregation.mondrian._mondrian_kernel",
    # ONA and ONA* labels and the total sum of squares (reproduce_ona.py, reproduce_table6.py)
    "ona_best_labels": "incrowd.microaggregation.ona._ona_kernel",
    "ona_star_labels": "incrowd.microaggregation.ona._ona_kernel",
    "sst_per_row": "incrowd.microaggregation.ona._ona_kernel",
    # Refine's moves and the lower bound's helpers (reproduce_refine.py)
    "MOVE_EXACT": "incrowd.microaggregation.refine._refine_kernel",
    "MOVE_SPLIT3": "incrowd.microaggregation.refine._refine_kernel",
    "MOVE_SWAP": "incrowd.microaggregation.refine._refine_kernel",
    "MOVE_SWEEP": "incrowd.microaggregation.refine._refine_kernel",
    "bound_distinct": "incrowd.microaggregation._bound:_distinct",
    "BOUND_ALL_ROWS_MAX": "incrowd.microaggregation._bound:_ALL_ROWS_MAX",
    # the lattice: bottom classes and the one-request search of the CLI (bench_lattice_memory.py,
    # startup.py)
    "count_bottom_classes": "incrowd.generalization._limits",
    "one_request": "incrowd.generalization._search_plain",
    # a node's working table, the extension's kernels against numba's (native_tables.py)
    "group_rows": "incrowd._native",
    "generalize_table": "incrowd.generalization._node_tables",
    "rollup": "incrowd.generalization._node_tables",
    "node_histograms": "incrowd.generalization._node_tables",
    "code_map_table": "incrowd.generalization._table",
    # mixed releases (bench_publish.py, bench_joint.py)
    "numeric_information_loss": "incrowd.publishing._measures",
    "standardize_columns": "incrowd.publishing._prepare:_standardize",
    "group_lca": "incrowd.microaggregation.joint._joint",
    "joint_labels": "incrowd.microaggregation.joint._joint",
    "joint_objective": "incrowd.microaggregation.joint._joint",
    # the report's measures, timed or compared one by one (bench_attacks.py,
    # bench_risk_measures.py, check_risk_sdcmicro.py, check_utility_sdcmicro.py)
    "attacks": "incrowd.reporting._attacks",
    "attribute_disclosure": "incrowd.reporting._risk",
    "class_risk": "incrowd.reporting._risk",
    "drisk": "incrowd.reporting._risk",
    "drisk_rmd": "incrowd.reporting._risk",
    # the report's row alignment (bench_report_speed.py)
    "align": "incrowd.reporting._align",
    # SUDA2 alone, beside sdcMicro's (peers/suda2_vs_sdcmicro.py)
    "suda2": "incrowd.reporting._suda2",
    "record_linkage": "incrowd.reporting._risk",
    "numeric_utility": "incrowd.reporting._utility",
    # the household check of a written release, run on sdcMicro's release too
    # (household_release_vs_sdcmicro.py)
    "household_verifier": "incrowd.publishing._households",
    "benchmark_estimates": "incrowd.reporting._benchmarks",
    # publish on Dask's tasks, each run in one process without Dask (publish_dask_tasks.py)
    "read_partition": "incrowd.distributed._risk:_read",
    "publish_facts_task": "incrowd.distributed._publish:_facts",
    "publish_bottom_task": "incrowd.distributed._publish:_bottom",
    "publish_split_task": "incrowd.distributed._publish:_split",
    "publish_classes_task": "incrowd.distributed._publish:_classes",
    "publish_piece": "incrowd.distributed._publish:_piece",
    "publish_write_task": "incrowd.distributed._publish:_write",
    "class_sizes": "incrowd.distributed._publish",
    "spread_classes": "incrowd.distributed._publish",
    # l's and t's kernels, local suppression's, the sum of squares and SUDA2's, the extension's
    # against their old numba code (native_sensitive.py)
    "sensitive_counts": "incrowd._native",
    "dense_status": "incrowd._native",
    "nearest_slots": "incrowd._native",
    "match_combinations": "incrowd._native",
    "squared_deviations": "incrowd._native",
    "dis_scores": "incrowd._native",
    "msu_search": "incrowd._native",
    "record_hashes": "incrowd._native",
    "suda2_suffix_classes": "incrowd.reporting._suda2:_suffix_classes",
}

__all__ = sorted(_SOURCES)


def __getattr__(name: str):
    try:
        source = _SOURCES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    module, _, attr = source.partition(":")
    value = getattr(import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SOURCES))
