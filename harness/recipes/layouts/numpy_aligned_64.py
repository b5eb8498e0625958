"""`numpy-aligned-64`: structured array `{u8 hash, u2 idx}` padded to 16 bytes (align=True)."""

from harness.recipes.layouts.numpy_struct import NumpyStructLayout


class NumpyAligned64Layout(NumpyStructLayout):
    name = "numpy-aligned-64"
    hash_bits = 64
    align = True
