#!/usr/bin/env bash
# On the TLJH machine, as root: students get Assignment List and Validate only; the
# instructor switches Formgrader and Create Assignment back on for themself (nbgrader's
# documented per-user setup). Run once after installing the course's packages.
set -euo pipefail
USER_ENV=/opt/tljh/user/bin
$USER_ENV/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:formgrader
$USER_ENV/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:create-assignment
$USER_ENV/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:course-list
$USER_ENV/jupyter server extension disable --sys-prefix nbgrader.server_extensions.formgrader
$USER_ENV/jupyter server extension disable --sys-prefix nbgrader.server_extensions.course_list
# the instructor's own switches (user level wins over sys_prefix)
sudo -u jupyter-instructor $USER_ENV/jupyter labextension enable --level=user @jupyter/nbgrader:formgrader
sudo -u jupyter-instructor $USER_ENV/jupyter labextension enable --level=user @jupyter/nbgrader:create-assignment
sudo -u jupyter-instructor $USER_ENV/jupyter labextension enable --level=user @jupyter/nbgrader:course-list
sudo -u jupyter-instructor $USER_ENV/jupyter server extension enable --user nbgrader.server_extensions.formgrader
sudo -u jupyter-instructor $USER_ENV/jupyter server extension enable --user nbgrader.server_extensions.course_list
# the exchange: writable by everyone, as nbgrader documents; nbgrader sets the modes below it
install -d -m 0777 /srv/nbgrader/exchange
