"""The package's version: one literal, read by the package root, the build backend and every module that
stamps results with it (so no module need import the package root, a layer above it)."""

__version__ = "0.1.0"
