"""The published sources behind the reproduced figures, cited by their public titles.

A figure's `source` names them by a short title, so that the checks table stays
readable; REPRODUCTION.md lists every short title with the full one under
"Sources" (docs/design.md, "Sources", lists them too).
"""

from __future__ import annotations

SCRATCH = "Consistent Hashing from Scratch"
RAM_VIDEO = "Rings ate so much RAM (video)"
MOD_N = "Why hash mod N fails"
SIMULATOR = "Semicolony simulator"
CLOUDFLARE = "Cloudflare post"
DESIGN = "docs/design.md"

#: (short title, full citation), in the order REPRODUCTION.md lists them
SOURCES: tuple[tuple[str, str], ...] = (
    (SCRATCH, '"Consistent Hashing from Scratch, and Why Cloudflare Deleted 90% of It" '
              "(blog post)"),
    (RAM_VIDEO, "\"Why Cloudflare's consistent hash rings ate so much RAM\" (video summary)"),
    (MOD_N, '"Consistent hashing: why hash mod N fails" (article; it opens "Every '
            'consistent-hashing explainer starts with a circle")'),
    (SIMULATOR, '"Consistent hashing simulator", Semicolony'),
    (CLOUDFLARE, 'Cloudflare blog, "Saving another 100TB of RAM with math (and Rust)", '
                 "2026-09-18: the original figures the articles above retell"),
    (DESIGN, "this repository's design document"),
)
