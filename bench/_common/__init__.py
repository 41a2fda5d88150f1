"""The harness every bench/ script shares, so that each script keeps only its experiment.

The scripts are run from the repository root as ``.venv/bin/python bench/<script>.py`` and import
from here (``from _common import ...``). The benchmark data are read from
:func:`data_dir` (``$INCROWD_DATA`` or ``../shared/data`` beside the checkout).
Several scripts write into the same Markdown files (``docs/reproduction.md``,
``docs/performance.md``, ``docs/studies.md``); each owns one section delimited by ``<!-- BEGIN name -->`` /
``<!-- END name -->`` and :func:`update_section` replaces only that section, under a file lock,
with an atomic write.

* ``machine``: CPU, cores, RAM, versions, time, git state of the checkout;
* ``data``: the published files as float matrices, Gaussian rows, the numpy reference;
* ``processes``: fresh-process runs with a JSON hand-back, /proc readings, a CPU burner;
* ``timing``: repeated runs, medians, quantiles, seconds as text;
* ``published``: our values against published ones (decimals, relative gaps, verdicts);
* ``papers``: the published values, typed in once;
* ``output``: Markdown tables and sections, figures, raw results as JSON.
"""

from __future__ import annotations

from .data import (  # noqa: F401
    ADULT_COLUMNS,
    DATA_NOTES,
    DISPLAY,
    EIA_COLUMNS,
    LOADERS,
    data_dir,
    gaussian,
    load,
    load_adult,
    load_census,
    load_cloud1,
    load_cloud2,
    load_credit,
    load_eia,
    load_tarragona,
    reference_module,
)
from .machine import (  # noqa: F401
    git_state,
    machine,
    machine_line,
    now_utc,
)
from .output import (  # noqa: F401
    load_json,
    md_table,
    pyplot,
    save_figure,
    save_json,
    update_section,
    write_markdown,
)
from .papers import (  # noqa: F401
    KS_2021,
    TABLE1_2021,
    TABLE5_2021,
    TABLE6_2021,
    TABLE6_2021_SECONDS,
)
from .paths import (  # noqa: F401
    DOCS,
    FIGURES,
    REPO,
)
from .processes import (  # noqa: F401
    Burner,
    OthersMeter,
    child_json,
    cpu_seconds,
    hand_back,
    peak_rss_bytes,
    proc_status,
    process_jiffies,
    process_tree,
    run_child,
    run_code,
    system_jiffies,
)
from .published import (  # noqa: F401
    comparison_rows,
    fmt_gap,
    il_percent,
    pass_fail,
    rel_gap,
    same2,
    same_at,
    same_groups,
    yes_no,
)
from .timing import (  # noqa: F401
    fmt_range,
    fmt_s,
    median,
    quantile,
    time_runs,
    timed_kernel,
)
