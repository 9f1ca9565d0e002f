# place: after:value_backward
# honest: IPython magics and shell escapes in the student's own cells.
%time _check = (Value(2.0) * Value(3.0) + 1.0)  # noqa: F821
%who_ls
!true
