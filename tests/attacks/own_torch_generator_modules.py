# place: replace:modules
# honest (10_own_torch): Module written with super().__setattr__, generators and recursion
# (as torch's own named_parameters is a generator), Linear built from nested lists.
class Module:
    def __init__(self):
        super().__setattr__("_parameters", {})
        super().__setattr__("_modules", {})

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):  # noqa: F821
            self.__dict__.pop(name, None)
            self._modules.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            self._parameters.pop(name, None)
            self._modules[name] = value
        else:
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            super().__setattr__(name, value)

    def __getattr__(self, name):
        if name in self.__dict__.get("_parameters", {}):
            return self.__dict__["_parameters"][name]
        if name in self.__dict__.get("_modules", {}):
            return self.__dict__["_modules"][name]
        raise AttributeError(name)

    def _walk(self, prefix, seen):
        if id(self) in seen:
            return
        seen.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            yield from child._walk(prefix + name + ".", seen)

    def named_parameters(self):
        done = set()
        for prefix, module in self._walk("", set()):
            for name, p in module._parameters.items():
                if id(p) not in done:
                    done.add(id(p))
                    yield prefix + name, p

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def __call__(self, *args):
        return self.forward(*args)


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        k = in_features ** -0.5
        self.weight = Parameter(tensor([[random.uniform(-k, k) for _ in range(in_features)]  # noqa: F821
                                        for _ in range(out_features)]))
        self.bias = Parameter(tensor([random.uniform(-k, k) for _ in range(out_features)])) if bias else None  # noqa: F821

    def forward(self, x):
        y = x @ self.weight.transpose(0, 1)
        return y if self.bias is None else y + self.bias


class ReLU(Module):
    def forward(self, x):
        return x.relu()


class Sequential(Module):
    def __init__(self, *layers):
        super().__init__()
        for i, layer in enumerate(layers):
            setattr(self, str(i), layer)

    def forward(self, x):
        for layer in self._modules.values():
            x = layer(x)
        return x
