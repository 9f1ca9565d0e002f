# place: end
# Plants a folder the old wipe could not delete (it holds a file and has no permissions) at
# the path where every later child of this sandbox opens its output file.
import os

os.unlink("/tmp/output.txt")
os.makedirs("/tmp/output.txt/locked")
with open("/tmp/output.txt/locked/keep", "w") as handle:
    handle.write("x")
os.chmod("/tmp/output.txt/locked", 0)
