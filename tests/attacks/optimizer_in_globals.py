# place: after:adagrad
# Delegation the previous design's reachability walk missed: the real torch.optim optimizers
# live in a module-level dict keyed by the student's object, which itself holds none of them
# (the walk followed attributes, containers, bound methods and closures, not a function's
# globals).
_REAL = {}


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, momentum=0.0):
        _REAL[id(self)] = torch.optim.RMSprop(params, lr=lr, alpha=alpha, eps=eps, momentum=momentum)  # noqa: F821

    def step(self):
        _REAL[id(self)].step()

    def zero_grad(self):
        _REAL[id(self)].zero_grad()


class Adagrad:
    def __init__(self, params, lr=1e-2, eps=1e-10):
        _REAL[id(self)] = torch.optim.Adagrad(params, lr=lr, eps=eps)  # noqa: F821

    def step(self):
        _REAL[id(self)].step()

    def zero_grad(self):
        _REAL[id(self)].zero_grad()
