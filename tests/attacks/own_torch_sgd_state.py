# place: replace:sgd
# honest (10_own_torch): SGD keeping torch-like per-parameter state in a dict keyed by the
# parameter itself, the update written element by element into the storage.
class SGD:
    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
        self.param_groups = [{"params": list(params), "lr": lr, "momentum": momentum,
                              "weight_decay": weight_decay, "nesterov": nesterov}]
        self.state = {}

    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                d_p = p.grad.values()
                if group["weight_decay"] != 0:
                    d_p = [g + group["weight_decay"] * w for g, w in zip(d_p, p.values())]
                if group["momentum"] != 0:
                    if "momentum_buffer" not in self.state.setdefault(p, {}):
                        buf = list(d_p)
                    else:
                        buf = [group["momentum"] * b + g for b, g in zip(self.state[p]["momentum_buffer"], d_p)]
                    self.state[p]["momentum_buffer"] = buf
                    d_p = [g + group["momentum"] * b for g, b in zip(d_p, buf)] if group["nesterov"] else buf
                for position, change in zip(p.positions(), d_p):
                    p.storage[position] -= group["lr"] * change

    def zero_grad(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.grad = None
