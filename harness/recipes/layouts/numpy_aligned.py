"""`numpy-aligned`: structured array `{u4 hash, u2 idx}` padded to 8 bytes (align=True)."""

from harness.recipes.layouts.numpy_struct import NumpyStructLayout


class NumpyAlignedLayout(NumpyStructLayout):
    name = "numpy-aligned"
    align = True
