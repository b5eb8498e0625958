"""What one change of fleet does to preference lists: copies lost, re-created, moved.

Plain functions over two arrays of preference lists (keys x copies, server
indexes in one numbering), so that the replication metric only builds rings
and names what it measured.

Where a lost copy is re-created from. Dynamo and Cassandra copy a lost
replica from a surviving one; which one is the system's choice. The rule here
is the ring's neighbour: the copy that followed the lost one in the key's old
preference list, or the one before it when the lost copy was the last. With
one point per server every key the failed server held is then copied from one
of its two ring neighbours; with many points per server, from many servers. A
key that lost no copy but whose list changed anyway (HAProxy's ring renumbers the
survivors' points when a server leaves its list) has its new copies sent by its
first copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Recreation:
    """The copies a failure leaves to re-create, and the servers that do the work."""

    keys_losing_a_copy: int
    keys_changed: int
    copies: int
    #: servers sending copies (one per lost copy, by the neighbour rule), and receiving them
    sources: int
    destinations: int
    #: the busiest source's and destination's share of the copies
    busiest_source_share: float
    busiest_destination_share: float
    #: copies sent by each source, most first
    per_source: tuple[int, ...]


def new_copies(before: npt.NDArray[np.integer],
               after: npt.NDArray[np.integer]) -> npt.NDArray[np.bool_]:
    """keys x copies: True where `after` holds a copy on a server `before` did not."""
    held: npt.NDArray[np.bool_] = ~(after[:, :, None] == before[:, None, :]).any(axis=2)
    return held


def changed_lists(before: npt.NDArray[np.integer],
                  after: npt.NDArray[np.integer]) -> npt.NDArray[np.bool_]:
    """Keys whose preference list differs (the order counts: the owner is listed first)."""
    changed: npt.NDArray[np.bool_] = (before != after).any(axis=1)
    return changed


def recreation(before: npt.NDArray[np.integer], after: npt.NDArray[np.integer],
               failed: int) -> Recreation:
    """The work of re-creating what server `failed` held (both arrays numbered as before)."""
    copies = before.shape[1]
    lost_at = before == failed
    losing = lost_at.any(axis=1)
    created = new_copies(before, after)
    per_key = created.sum(axis=1)
    destinations = np.bincount(after[created].astype(np.int64))
    total = int(per_key.sum())
    # A key that kept all its copies but whose list still changed (a construction that
    # renumbers the survivors' points) moves copies between survivors: its first copy
    # sends them.
    source_of = before[:, 0].astype(np.int64)
    if copies > 1:
        position = lost_at[losing].argmax(axis=1)
        neighbour = np.where(position < copies - 1, position + 1, position - 1)
        source_of[losing] = before[losing][np.arange(len(position)), neighbour]
        sources = np.bincount(source_of, weights=per_key).astype(np.int64)
    else:  # one copy: a lost key has nothing left to copy from, its data is lost
        sources = np.bincount(source_of[~losing], weights=per_key[~losing]).astype(np.int64)
    sent = np.sort(sources[sources > 0])[::-1]
    return Recreation(
        keys_losing_a_copy=int(losing.sum()),
        keys_changed=int(changed_lists(before, after).sum()),
        copies=total,
        sources=len(sent),
        destinations=int(np.count_nonzero(destinations)),
        busiest_source_share=float(sent[0] / total) if len(sent) and total else 0.0,
        busiest_destination_share=float(destinations.max() / total) if total else 0.0,
        per_source=tuple(int(s) for s in sent),
    )


def keys_sharing_a_zone(lists: npt.NDArray[np.integer],
                        zone_of: npt.NDArray[np.integer]) -> int:
    """Keys two of whose copies are in one zone."""
    zones = np.sort(zone_of[lists], axis=1)
    return int((zones[:, 1:] == zones[:, :-1]).any(axis=1).sum())


def copy_load(lists: npt.NDArray[np.integer], weights: npt.NDArray[np.float64]
              ) -> tuple[float, float]:
    """CV and peak-to-mean of each server's copies per unit weight."""
    per_weight = np.bincount(lists.ravel().astype(np.int64), minlength=len(weights)) / weights
    mean = per_weight.mean()
    return float(per_weight.std() / mean), float(per_weight.max() / mean)
