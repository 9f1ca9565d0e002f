# place: replace:value_backward
# honest: another design of the backward pass: a traversal class and a subclass for one pass,
# an iterative topological order with iterators instead of an explicit (node, flag) stack.
class Traversal:
    """The nodes reachable from a root, each listed after every node it was computed from."""

    def __init__(self, root):
        self.root = root

    def order(self):
        order, seen, stack = [], {id(self.root)}, [(self.root, iter(self.root._prev))]
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


class BackwardPass(Traversal):
    """One call of backward(): buffers of this pass, the root seeded, saved values freed."""

    def __init__(self, root, retain_graph):
        super().__init__(root)
        self.retain_graph = retain_graph

    def run(self):
        order = self.order()
        for node in order:
            if node._prev:
                node.grad = 0.0
        self.root.grad += 1.0
        for node in reversed(order):
            if node._saved is None:
                raise RuntimeError(SECOND_BACKWARD_ERROR)  # noqa: F821
            node._backward()
            if not self.retain_graph and node._saved:
                node._saved = None


def value_backward(self, retain_graph=False):
    BackwardPass(self, retain_graph).run()


Value.backward = value_backward  # noqa: F821
