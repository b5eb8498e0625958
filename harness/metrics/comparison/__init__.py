"""The comparison metric ([comparison]): every algorithm and peer side by side over
generated fleets. `metric` measures, `options` reads the table, `records` and `tables`
hold and render the figures."""
