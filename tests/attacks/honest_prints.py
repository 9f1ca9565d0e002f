# place: before:value_ops
# honest: prints from the answers themselves (every backward() and every gradient step).
_quiet_backward = Value.backward  # noqa: F821


def _loud_backward(self):
    print("backward() from", self)
    _quiet_backward(self)
    print("gradient of the root:", self.grad)


Value.backward = _loud_backward  # noqa: F821
print("Value ready")
