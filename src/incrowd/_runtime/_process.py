"""What kind of process this is, for choices that pay off only over a process's lifetime.

``program`` is set by the ``incrowd`` program (one command, then exit; not by code that calls
the typer app in a longer-lived process). ``one_shot`` is set by a command of that program that
makes one computation (``microaggregate``): a start-up cost that a long-lived process (a
notebook, the web server, a benchmark) pays once would, there, be paid by the one call.
Commands that time or compile the kernels on purpose (``warmup``, ``incremental plan``,
``demo``) leave it unset. Nothing here imports anything: ``incrowd --version`` reads it too.
"""

program = False
one_shot = False
