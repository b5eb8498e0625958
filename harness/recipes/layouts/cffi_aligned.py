"""`cffi-aligned`: C array of `struct { uint32_t hash; uint16_t idx; }`, 8 bytes with padding."""

from harness.recipes.layouts.cffi_struct import CffiStructLayout


class CffiAlignedLayout(CffiStructLayout):
    name = "cffi-aligned"
    struct_kind = "aligned"
