"""`make bench`: run every benchmark in bench/ (each prints its own ratios)."""
import importlib
import pkgutil
import sys
from pathlib import Path

status = 0
for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
    if info.name.startswith("bench_"):
        print(f"\n== {info.name} ==", flush=True)
        status |= importlib.import_module(f"bench.{info.name}").main() or 0
sys.exit(status)
