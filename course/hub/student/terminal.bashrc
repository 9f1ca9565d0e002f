# The course hub's terminals (bash --rcfile this -i): a login shell's own setup, then the
# course's commands first on PATH again, since Debian's /etc/profile sets PATH from scratch.
# `course` is then the class environment's: with the instructor's checkout on PYTHONPATH it
# is the instructor's (release, collect, grade ...), with a student's kit theirs (validate).
[ -r /etc/profile ] && . /etc/profile
for startup in ~/.bash_profile ~/.bash_login ~/.profile; do
    if [ -r "$startup" ]; then . "$startup"; break; fi
done
unset startup
export PATH="$COURSE_PATH:$PATH"
export PYTHONPATH="$COURSE_PYTHONPATH"
