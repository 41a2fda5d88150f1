"""The names of the increment strategies, for ``--help`` without loading the kernels behind them
(a test keeps them equal to the keys of ``STRATEGIES``)."""

STRATEGY_NAMES = ("2mdav", "nn", "nn-split-mid", "nn-split-end")
