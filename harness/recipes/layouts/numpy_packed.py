"""`numpy-packed`: structured array `{u4 hash, u2 idx}` packed into 6 bytes."""

from harness.recipes.layouts.numpy_struct import NumpyStructLayout


class NumpyPackedLayout(NumpyStructLayout):
    name = "numpy-packed"
    align = False
