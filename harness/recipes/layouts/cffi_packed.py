"""`cffi-packed`: the same struct with `__attribute__((packed))`, 6 bytes per entry."""

from harness.recipes.layouts.cffi_struct import CffiStructLayout


class CffiPackedLayout(CffiStructLayout):
    name = "cffi-packed"
    struct_kind = "packed"
