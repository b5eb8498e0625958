"""The clients metric ([clients]): every client library on the same fleets, whether they
agree and how fast each routes. `metric` measures, `options` reads the table, `members`
builds the clients, `records` and `tables` hold and render the figures."""
