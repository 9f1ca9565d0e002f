# place: before_each_test
# honest: BatchNorm2d draws random numbers it does not use when built, and train() draws some
# before training and returns its epoch losses through float64. Extra draws in the student's
# process must change no test input (inputs are data; the probes seed their own models).
import torch

if "BatchNorm2d" in globals() and not getattr(BatchNorm2d.__init__, "draws", False):  # noqa: F821
    def _init_with_a_draw(self, *args, _plain=BatchNorm2d.__init__, **kwargs):  # noqa: F821
        torch.rand(3)  # an unused draw
        _plain(self, *args, **kwargs)

    _init_with_a_draw.draws = True
    BatchNorm2d.__init__ = _init_with_a_draw  # noqa: F821

if "train" in globals() and not getattr(train, "draws", False):  # noqa: F821
    def _train_with_a_draw(model, loader, epochs, lr, accumulation, _plain=train):  # noqa: F821
        torch.rand(7)  # an unused draw
        return [float(torch.tensor(loss, dtype=torch.float64))
                for loss in _plain(model, loader, epochs, lr, accumulation)]

    _train_with_a_draw.draws = True
    train = _train_with_a_draw
