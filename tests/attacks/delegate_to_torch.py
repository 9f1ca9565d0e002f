# place: before_each_test
# 01_tensors answered by torch itself: the stride questions delegated to real tensors.
import torch


def can_view(shape, strides, new_shape):
    try:
        torch.empty_strided(shape, strides).view(new_shape)
    except RuntimeError:
        return False
    return True


def expanded_strides(shape, strides, target_shape):
    return torch.empty_strided(shape, strides).expand(*target_shape).stride()


_x = torch.arange(12.).reshape(3, 4)
shares_storage = {e: eval(e, {"torch": torch, "x": _x}).untyped_storage().data_ptr() == _x.untyped_storage().data_ptr()
                  for e in ["x[1]", "x.t()", "x.t().contiguous()", "x.reshape(12)", "x.t().reshape(12)", "x[:, ::2]",
                            "x[[0, 2]]", "x.unsqueeze(0).expand(2, 3, 4)", "torch.cat([x, x])", "x.clone()",
                            "x.flatten()", "x.chunk(2, dim=1)[0]"]}
