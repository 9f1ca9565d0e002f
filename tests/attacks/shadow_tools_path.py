# place: before_tools
# A fake autograder.tools first on sys.path, before the locked grading-tools cell imports it
# (the files are the student's own, written where the notebook runs), and the real one
# forgotten by sys.modules.
import os, sys
_folder = os.path.join(os.getcwd(), "shadow_site")
os.makedirs(os.path.join(_folder, "autograder"), exist_ok=True)
open(os.path.join(_folder, "autograder", "__init__.py"), "w").close()
with open(os.path.join(_folder, "autograder", "tools.py"), "w") as _file:
    _file.write(FAKE_TOOLS)
sys.path.insert(0, _folder)
for _name in [name for name in sys.modules if name == "autograder" or name.startswith("autograder.")]:
    del sys.modules[_name]
