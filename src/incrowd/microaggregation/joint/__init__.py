"""The joint clustering: one partition over numeric and categorical quasi-identifiers together
(``publish``'s ``strategy = "joint"``).

``_joint.py``: the loss (numeric SSE plus the categorical columns' lowest-common-ancestor levels),
MDAV-style seeding and ONA*-style refinement (:func:`joint_labels`, :func:`group_lca`,
:func:`joint_objective`), run inside Mondrian-style parts on a large file (:func:`joint_parts`);
``_joint_kernels.py``: their numba kernels (seeding rounds, moves).
The release-level glue (hierarchies, suppression, the verified table) is
``incrowd.publishing._joint_release``. Imports only the shared helpers, no other family.
"""
