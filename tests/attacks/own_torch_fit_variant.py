# place: replace:fit
# honest (10_own_torch): another architecture and schedule, the module's own zero_grad, and
# numpy imported but never used (the part is graded without numpy: an unused import is free).
import numpy as np


def fit(X, y):
    random.seed(1)  # noqa: F821
    model = Sequential(Linear(64, 40), ReLU(), Linear(40, 10))  # noqa: F821
    optimizer = SGD(model.parameters(), lr=0.1, momentum=0.8, weight_decay=1e-4)  # noqa: F821
    examples = list(zip(X, y))
    for epoch in range(3):
        random.shuffle(examples)  # noqa: F821
        for start in range(0, len(examples), 50):
            batch = examples[start:start + 50]
            x = tensor([row for row, _ in batch])  # noqa: F821
            loss = cross_entropy(model(x), [label for _, label in batch])  # noqa: F821
            model.zero_grad()
            loss.backward()
            optimizer.step()
    return model
