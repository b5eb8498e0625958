"""`numpy-packed-64`: structured array `{u8 hash, u2 idx}` packed into 10 bytes."""

from harness.recipes.layouts.numpy_struct import NumpyStructLayout


class NumpyPacked64Layout(NumpyStructLayout):
    name = "numpy-packed-64"
    hash_bits = 64
    align = False
