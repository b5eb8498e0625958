"""Recipes: how a key finds its server. Constructions make a ring's points, layouts hold
a ring in memory, algorithms route (the ring is one of them), peers are third-party
libraries measured as they are; plugins register more of each."""
