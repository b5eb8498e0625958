"""The migration metric ([migration]): a change of recipe rolled out in stages through LRU
caches. `metric` measures; `sides` builds a side that is a peer (switching clients)."""
