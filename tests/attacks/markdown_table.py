# place: end
# Not code: markdown_table_cell() below builds a 2 MB markdown table for a markdown cell. The
# host renders a student's markdown for formgrader: this one took 41 s of host time, with no
# limit (notebooks up to 64 MiB are accepted).
def markdown_table_cell(rows=20000):
    header = "| " + " | ".join(f"c{k}" for k in range(10)) + " |\n|" + "---|" * 10 + "\n"
    row = "| " + " | ".join("cell text" for _ in range(10)) + " |\n"
    return header + row * rows
