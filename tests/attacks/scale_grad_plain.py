# place: replace:scale_grad
# The baseline of scale_grad_subclass: the same wrong forward value, no subclass.
def scale_grad(x, scale):
    return x * scale
