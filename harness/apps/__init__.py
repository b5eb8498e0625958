"""Applications built on the layers below: plan, explore, reproduction and the
benchmark gate."""
