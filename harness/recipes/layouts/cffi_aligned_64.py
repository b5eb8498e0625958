"""`cffi-aligned-64`: C array of `struct { uint64_t hash; uint16_t idx; }`, padded to 16 bytes."""

from harness.recipes.layouts.cffi_struct import CffiStructLayout


class CffiAligned64Layout(CffiStructLayout):
    name = "cffi-aligned-64"
    hash_bits = 64
    struct_kind = "aligned64"
