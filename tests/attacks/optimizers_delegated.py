# place: replace
# Not an attack on its own: 08's RMSprop and Adagrad as wrappers holding torch.optim's.
ANSWERS = {
    "rmsprop": '''class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, momentum=0.0):
        self.inner = torch.optim.RMSprop(list(params), lr=lr, alpha=alpha, eps=eps, momentum=momentum)

    def step(self):
        self.inner.step()

    def zero_grad(self):
        self.inner.zero_grad(set_to_none=True)
''',
    "adagrad": '''class Adagrad:
    def __init__(self, params, lr=1e-2, eps=1e-10):
        self.inner = torch.optim.Adagrad(list(params), lr=lr, eps=eps)

    def step(self):
        self.inner.step()

    def zero_grad(self):
        self.inner.zero_grad(set_to_none=True)
''',
}
