# place: replace:ops
# honest (10_own_torch): the operations lean on the student's own views (expand, transpose,
# contiguous) and on each other (matmul's backward is two more matmuls).
def _common_shape(a, b):
    shape = a.shape if len(a.shape) >= len(b.shape) else b.shape
    for t in (a, b):
        if shape[len(shape) - len(t.shape):] != t.shape:
            raise RuntimeError(f"cannot combine shapes {a.shape} and {b.shape}")
    return shape


def _fold(grad_values, shape):
    total = [0.0] * math.prod(shape)  # noqa: F821
    for i, value in enumerate(grad_values):
        total[i % len(total)] += value
    return Tensor(total, shape)  # noqa: F821


def add(a, b):
    shape = _common_shape(a, b)
    x, y = a.expand(*shape).values(), b.expand(*shape).values()
    out = Tensor([p + q for p, q in zip(x, y)], shape)  # noqa: F821
    return attach(out, (a, b), lambda g: (_fold(g.values(), a.shape), _fold(g.values(), b.shape)))  # noqa: F821


def mul(a, b):
    shape = _common_shape(a, b)
    x, y = a.expand(*shape).contiguous().values(), b.expand(*shape).contiguous().values()
    out = Tensor([p * q for p, q in zip(x, y)], shape)  # noqa: F821

    def backward(g):
        g = g.values()
        return _fold([u * v for u, v in zip(g, y)], a.shape), _fold([u * v for u, v in zip(g, x)], b.shape)
    return attach(out, (a, b), backward)  # noqa: F821


def matmul(a, b):
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise RuntimeError(f"cannot multiply {a.shape} by {b.shape}")
    rows = a.values()
    columns = b.transpose(0, 1).contiguous().values()
    k = a.shape[1]
    out = Tensor([sum(x * y for x, y in zip(rows[i * k:(i + 1) * k], columns[j * k:(j + 1) * k]))  # noqa: F821
                  for i in range(a.shape[0]) for j in range(b.shape[1])], (a.shape[0], b.shape[1]))

    def backward(g):
        a_plain, b_plain = Tensor(a.values(), a.shape), Tensor(b.values(), b.shape)  # noqa: F821
        return matmul(g, b_plain.transpose(0, 1)), matmul(a_plain.transpose(0, 1), g)
    return attach(out, (a, b), backward)  # noqa: F821


def relu(a):
    x = a.values()
    return attach(Tensor([max(v, 0.0) for v in x], a.shape), (a,),  # noqa: F821
                  lambda g: (Tensor([u if v > 0 else 0.0 for u, v in zip(g.values(), x)], a.shape),))  # noqa: F821


def tensor_sum(a):
    out = Tensor([sum(a.values())], ())  # noqa: F821
    return attach(out, (a,), lambda g: (Tensor([g.item()], ()).expand(*a.shape).contiguous(),))  # noqa: F821


def cross_entropy(logits, targets):
    n, c = logits.shape
    rows = logits.contiguous().values()
    probabilities, loss = [], 0.0
    for i, t in enumerate(targets):
        row = rows[i * c:(i + 1) * c]
        top = max(row)
        weights = [math.exp(v - top) for v in row]  # noqa: F821
        loss -= row[t] - top - math.log(sum(weights))  # noqa: F821
        probabilities += [w / sum(weights) for w in weights]

    def backward(g):
        scale = g.item() / n
        return (Tensor([(p - (j % c == targets[j // c])) * scale for j, p in enumerate(probabilities)],  # noqa: F821
                       logits.shape),)
    return attach(Tensor([loss / n], ()), (logits,), backward)  # noqa: F821


Tensor.__add__ = add  # noqa: F821
Tensor.__mul__ = mul  # noqa: F821
Tensor.__matmul__ = matmul  # noqa: F821
Tensor.relu = relu  # noqa: F821
Tensor.sum = tensor_sum  # noqa: F821
