"""`course report <a>`: a CSV of points per question, a PNG of each question's score
distribution, and a short text summary (also written next to them)."""
from __future__ import annotations

import statistics
from collections import Counter

from coursebase.model import Course

from .csvsafe import writer as csv_writer
from .results import read_results


def write_report(course: Course, assignment: str) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    graded = [result for result in read_results(course, assignment) if result.graded]
    if not graded:
        from .export import nothing_graded
        raise nothing_graded(assignment)
    questions = [t.grade_id for t in graded[0].tests]
    maxima = {t.grade_id: t.max_points for t in graded[0].tests}
    folder = course.reports_root / assignment
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "questions.csv").open("w", newline="") as handle:
        writer = csv_writer(handle)
        writer.writerow(["student", *questions, "score", "max_score", "status"])
        for row in graded:
            points = {t.grade_id: t.points for t in row.tests}
            writer.writerow([row.student, *(f"{points.get(q, 0):g}" for q in questions),
                             f"{row.final_score:g}", f"{row.max_score:g}", row.status])

    columns = min(3, len(questions))
    rows_of_plots = (len(questions) + columns - 1) // columns
    figure, axes = plt.subplots(rows_of_plots, columns, figsize=(4 * columns, 3 * rows_of_plots), squeeze=False)
    for axis, question in zip(axes.flat, questions):
        values = [next(t.points for t in row.tests if t.grade_id == question) for row in graded]
        bins = [x - 0.5 for x in range(int(maxima[question]) + 2)] if maxima[question] <= 20 else 10
        axis.hist(values, bins=bins, color="#4a7dbf", edgecolor="white")
        axis.set_title(f"{question} (max {maxima[question]:g})", fontsize=9)
        axis.set_xlabel("points")
        axis.set_ylabel("submissions")
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    for axis in list(axes.flat)[len(questions):]:
        axis.set_visible(False)
    figure.suptitle(f"{assignment}: score distribution per question")
    figure.tight_layout()
    figure.savefig(folder / "distribution.png", dpi=100)
    plt.close(figure)

    scores = [row.score for row in graded]
    statuses = Counter(row.status.split(" at cell")[0] for row in graded)
    lines = [
        f"{assignment}: {len(graded)} submission(s), max {graded[0].max_score:g} points",
        f"score: mean {statistics.mean(scores):.2f}, median {statistics.median(scores):g}, "
        f"min {min(scores):g}, max {max(scores):g}",
        "per question (full marks / submissions): " + ", ".join(
            f"{q} {sum(1 for r in graded if any(t.grade_id == q and t.points >= t.max_points for t in r.tests))}/{len(graded)}"
            for q in questions),
        "runs: " + ", ".join(f"{status} {count}" for status, count in statuses.most_common()),
        f"files: {folder / 'questions.csv'}, {folder / 'distribution.png'}",
    ]
    summary = "\n".join(lines)
    (folder / "summary.txt").write_text(summary + "\n")
    return summary
