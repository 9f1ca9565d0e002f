# place: replace:backward
# honest (10_own_torch): backward by counting each tensor's users first (Kahn's algorithm), and
# gradients summed with the + operator (the student's own add).
def tensor_backward(self, grad=None):
    if not self.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if grad is None:
        if len(self.values()) != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        grad = Tensor([1.0], self.shape)  # noqa: F821
    users, stack, found = {}, [self], {id(self): self}
    while stack:
        node = stack.pop()
        for parent in node._prev:
            if parent.requires_grad:
                users[id(parent)] = users.get(id(parent), 0) + 1
                if id(parent) not in found:
                    found[id(parent)] = parent
                    stack.append(parent)
    gradients, ready = {id(self): grad}, [self]
    while ready:
        node = ready.pop()
        g = gradients.pop(id(node))
        if not node._prev:
            node.grad = g if node.grad is None else node.grad + g
            continue
        for parent, part in zip(node._prev, node._backward(g)):
            if not parent.requires_grad:
                continue
            gradients[id(parent)] = part if id(parent) not in gradients else gradients[id(parent)] + part
            users[id(parent)] -= 1
            if users[id(parent)] == 0:
                ready.append(parent)


Tensor.backward = tensor_backward  # noqa: F821
