"""The data layer: bundles on disk, the data path, stand-ins and the in-memory Benchmark."""
