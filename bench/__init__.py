"""Benchmarks: each prints ratios against the peer measured in the same run."""
