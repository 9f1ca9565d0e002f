# place: after:value_backward
# honest: prints from the answers themselves (every backward() and every gradient step).
_quiet_backward = Value.backward  # noqa: F821


def _loud_backward(self, *args, **kwargs):
    print("backward() from", self)
    _quiet_backward(self, *args, **kwargs)
    print("gradient of the root:", self.grad)


Value.backward = _loud_backward  # noqa: F821
print("Value ready")
