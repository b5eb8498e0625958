"""`cffi-packed-64`: the 64-bit struct with `__attribute__((packed))`, 10 bytes per entry."""

from harness.recipes.layouts.cffi_struct import CffiStructLayout


class CffiPacked64Layout(CffiStructLayout):
    name = "cffi-packed-64"
    hash_bits = 64
    struct_kind = "packed64"
