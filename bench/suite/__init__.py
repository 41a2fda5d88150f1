"""Timing benchmarks over incrowd's public API, in the style of scikit-learn's ``asv_benchmarks``.

One module per area (``microaggregation``, ``publish``, ``report``, ``incremental``); in each, classes
with ``params`` / ``param_names``, a ``setup`` taking the parameters and ``time_*`` methods taking
them too, as airspeed velocity (asv) names them, so asv could run the suite later. Only names
that ``import incrowd`` gives are used: no private kernels (those are ``incrowd.cli._bench_entry``'s,
for the whole-process benches beside this folder).

``run.py`` runs the suite without asv: ``.venv/bin/python bench/suite/run.py [--quick] [FILTER]``
(``make bench``). See its docstring for what is timed.
"""
