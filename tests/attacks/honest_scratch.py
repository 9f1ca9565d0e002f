# place: end
# honest: a scratch cell at the end that tries the answers, displays them and leaves a value.
x = Value(0.5)  # noqa: F821
y = (x * x - x).relu()
y.backward()
display(x)  # noqa: F821
import torch

t = torch.arange(6.0).reshape(2, 3)
sum_to_shape(t, (1, 3))  # noqa: F821
x.grad
