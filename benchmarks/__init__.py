"""Benchmarks of sklearn-smallfair against named baselines.

Run ``python benchmarks/run.py [--quick]`` from the repository root; see
``benchmarks/README.md``. Importing this package (or any module in it) runs nothing.
"""
