"""The package's version, in the bottom layer so that results can record it."""

VERSION = "0.1.0"
