# place: before:value_backward
# honest: a first try with a syntax error, left in the notebook; the answer cell below defines
# value_backward correctly.
def value_backward(self, retain_graph=False)
    self.grad = 1.0
