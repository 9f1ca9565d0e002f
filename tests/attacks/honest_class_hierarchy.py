# place: replace:value_core
# honest: another design of the engine: a base class for the graph, Value built on it, an
# iterative topological order with iterators instead of an explicit (node, flag) stack.
class Node:
    """What every node of the graph has: its parents, and how to pass gradients to them."""

    def __init__(self, parents=()):
        self._prev = tuple(parents)
        self._backward = lambda: None

    def topological_order(self):
        order, seen, stack = [], {id(self)}, [(self, iter(self._prev))]
        while stack:
            node, children = stack[-1]
            for child in children:
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, iter(child._prev)))
                    break
            else:
                stack.pop()
                order.append(node)
        return order


class Value(Node):
    def __init__(self, data, _prev=(), _op=""):
        super().__init__(_prev)
        self.data = float(data)
        self.grad = 0.0
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data:.4g}, grad={self.grad:.4g})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        self.grad = 1.0
        for node in reversed(self.topological_order()):
            node._backward()

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __rsub__(self, other):
        return Value(other) - self
