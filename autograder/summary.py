"""The table printed at the end of `course grade`."""
from __future__ import annotations


def _points(value: float) -> str:
    return f"{value:g}"


def print_summary(rows, stream) -> None:
    if not rows:
        print("no submissions found", file=stream)
        return
    width = max(7, *(len(r.student) for r in rows))
    print(f"{'student':<{width}}  {'score':>11}  status", file=stream)
    for row in rows:
        score = f"{_points(row.score)}/{_points(row.max_score)}"
        print(f"{row.student:<{width}}  {score:>11}  {row.message}", file=stream)
    total = len(rows)
    ok = sum(1 for r in rows if r.status == "ok")
    mean = sum(r.score for r in rows) / total
    print(f"{total} submission(s), {ok} ran cleanly, mean score {mean:.2f}/{_points(rows[0].max_score)}",
          file=stream)
