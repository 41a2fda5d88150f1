"""Rank swapping's loop, compiled by numba (:mod:`incrowd.perturbation.rank_swap` loads it on
its first swap)."""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def swap(values, done, window, draws):
    # a partner is drawn among the free ranks of (j, j + window): a few random tries at a slot
    # of the window (almost always free), then a count of the free slots; linear in practice
    n = values.size
    swaps = 0
    for j in range(n):
        if done[j]:
            continue
        hi = min(n, j + window)
        span = hi - j - 1
        if span <= 0:
            continue
        partner = -1
        for attempt in range(draws.shape[1] - 1):
            k = j + 1 + min(int(draws[j, attempt] * span), span - 1)
            if not done[k]:
                partner = k
                break
        if partner < 0:
            free = 0
            for k in range(j + 1, hi):
                if not done[k]:
                    free += 1
            if free == 0:
                continue
            pick = min(int(draws[j, draws.shape[1] - 1] * free), free - 1)
            for k in range(j + 1, hi):
                if not done[k]:
                    if pick == 0:
                        partner = k
                        break
                    pick -= 1
        tmp = values[j]
        values[j] = values[partner]
        values[partner] = tmp
        done[j] = True
        done[partner] = True
        swaps += 1
    return swaps
