"""`[removals]`: which fleet, which algorithms, which orders and how far to remove servers.

Read and checked when the scenario loads, before any work; every problem is one line
naming the field (`removals.orders`, `removals.algorithms[1].name`, ...). Algorithm recipes
are read as the comparison reads them (`take_recipes`): every registered algorithm with
its defaults unless listed, the ring in its fastest layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.fields import Fields
from harness.core.ring import MAX_SERVERS
from harness.metrics.comparison.options import RecipeSpec, take_recipes
from harness.metrics.removals.walk import ORDERS, removed_counts

#: the ring's layout when recipes are not listed: the classic ring, a sorted array of
#: 6-byte entries searched in C
DEFAULT_LAYOUTS = ("cffi-packed",)


@dataclass(frozen=True)
class RemovalsOptions:
    #: servers of the fleet (weight 1 each), before any leaves
    servers: int
    recipes: tuple[RecipeSpec, ...]
    orders: tuple[str, ...] = ORDERS
    #: server names
    name: str = "server-{i}"
    #: the largest share of the fleet removed, and the share removed between steps
    max_share: float = 0.9
    step: float = 0.1
    #: seed of the random order
    seed: int = 1
    #: uniform keys routed at every step (balance, moved keys, monotonicity)
    keys: int = 100_000
    #: timed rounds per step (after one warm-up round); keys per scalar and batch round
    repeats: int = 3
    scalar_keys: int = 2_000
    batch_keys: int = 20_000
    #: keys checked against each state's plain-Python reference
    parity_keys: int = 200
    #: memray in a fresh process per algorithm and order, every step measured
    memory: bool = True

    @property
    def counts(self) -> list[int]:
        """Servers removed at each step."""
        return removed_counts(self.servers, self.max_share, self.step)


def parse_removals(table: Fields) -> RemovalsOptions:
    """`[removals]`: servers, algorithms, orders, name, max_share, step, seed, keys, repeats,
    scalar_keys, batch_keys, parity_keys, memory."""
    servers = table.take_int("servers", 100, minimum=2, maximum=MAX_SERVERS)
    recipes = take_recipes(table, DEFAULT_LAYOUTS)
    orders = table.take_str_list("orders", list(ORDERS), choices=ORDERS)
    if not orders or len(set(orders)) != len(orders):
        raise table.error("orders", "a non-empty list of distinct orders from "
                          + ", ".join(ORDERS), list(orders))
    max_share = table.take_number("max_share", RemovalsOptions.max_share, bounds=(0.01, 0.99))
    step = table.take_number("step", RemovalsOptions.step, bounds=(0.001, 0.99))
    if step > max_share:
        raise table.error("step", f"at most max_share ({max_share:g})", step)
    memory = table.take_raw("memory", RemovalsOptions.memory, expected="true or false")
    if not isinstance(memory, bool):
        raise table.error("memory", "true or false", memory)
    options = RemovalsOptions(
        servers=servers, recipes=tuple(recipes), orders=orders,
        name=table.take_template("name", RemovalsOptions.name, "i"),
        max_share=max_share, step=step,
        seed=table.take_int("seed", RemovalsOptions.seed, minimum=0),
        keys=table.take_int("keys", RemovalsOptions.keys, minimum=1, maximum=10**8),
        repeats=table.take_int("repeats", RemovalsOptions.repeats, minimum=1, maximum=1000),
        scalar_keys=table.take_int("scalar_keys", RemovalsOptions.scalar_keys, minimum=1,
                                   maximum=10**7),
        batch_keys=table.take_int("batch_keys", RemovalsOptions.batch_keys, minimum=1,
                                  maximum=10**8),
        parity_keys=table.take_int("parity_keys", RemovalsOptions.parity_keys, minimum=1,
                                   maximum=10**6),
        memory=memory,
    )
    table.finish()
    return options
