"""L-BFGS: a quasi-Newton method. It keeps the last ``history_size`` steps s and gradient changes y,
and from them builds, without ever forming a matrix, a direction that approximates the inverse
Hessian times the gradient (the two-loop recursion). ``step(closure)`` runs up to ``max_iter``
iterations, calling the closure for the loss and gradients as often as it needs."""
from __future__ import annotations

from ..autograd.grad_mode import enable_grad, no_grad
from ..functions import cat
from .optimizer import Optimizer, _check


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # the parameters seen as one flat vector
    def _flat_grad(self):
        return cat([p.new_zeros(p.numel()) if p.grad is None else p.grad.view(-1) for p in self._params], 0)

    def _add_to_params(self, step_size, direction):
        offset = 0
        for p in self._params:
            p.add_(direction[offset:offset + p.numel()].view_as(p), alpha=float(step_size))
            offset += p.numel()

    def _evaluate_along(self, closure, start, step_size, direction):
        """Loss and flat gradient at ``start + step_size * direction``; the parameters go back to start."""
        self._add_to_params(step_size, direction)
        loss = float(closure())
        flat_grad = self._flat_grad()
        for p, value in zip(self._params, start):
            p.copy_(value)
        return loss, flat_grad

    @no_grad()
    def step(self, closure):
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search_fn = group["history_size"], group["line_search_fn"]
        # everything L-BFGS remembers lives in the state of the first parameter
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:  # the very first direction: steepest descent
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)  # how the gradient changed
                s = d.mul(t)  # the step taken
                ys = y.dot(s)
                if ys > 1e-10:  # curvature condition: keep the pair only when it is informative
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)  # the initial inverse Hessian's scale
                # two-loop recursion: d = -H·g
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i].item())
                d = r = q.mul(H_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=(al[i] - be_i).item())

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss
            # the first step is scaled down by the gradient's size; later ones are lr
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)  # the directional derivative
            if gtd > -tolerance_change:  # not a descent direction any more
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                start = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, step_size, direction: self._evaluate_along(closure, x, step_size, direction),
                    start, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_to_params(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_to_params(t, d)
                opt_cond = False
                if n_iter != max_iter:  # the last iteration's loss is the next step's first
                    loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:  # the step is too small to matter
                break
            if abs(loss - prev_loss) < tolerance_change:  # the loss stopped moving
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """Where the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2 has its minimum, kept
    within ``bounds`` (by default between x1 and x2); the middle of them when it has none."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step size t along d meeting the strong Wolfe conditions (enough decrease: f(t) <= f + c1·t·gtd;
    a flat enough slope: |gtd(t)| <= -c2·gtd), as Nocedal and Wright's algorithms 3.5 and 3.6: first
    grow t until a bracket holds such a step, then shrink the bracket (zoom) by cubic interpolation.
    Returns the loss, flat gradient and t found, and how many evaluations it took."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(x, t, d)
    evaluations = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # each end of the bracket: [step, loss, gradient, slope]
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:  # both conditions hold: this t will do
            bracket, done = [[t, f_new, g_new, None]], True
            break
        if gtd_new >= 0:  # the slope turned: a minimum lies behind
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        # extrapolate: somewhere between a little and ten times further
        t_prev, t = t, _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                      bounds=(t + 0.01 * (t - t_prev), t * 10))
        f_prev, g_prev, gtd_prev = f_new, g_new.clone(), gtd_new
        f_new, g_new = evaluate(x, t, d)
        evaluations += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]

    # zoom: the low end has the smaller loss
    insufficient_progress = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1][0] - bracket[0][0]) * d_norm < tolerance_change:
            break
        (a, fa, _, ga), (b, fb, _, gb) = bracket
        t = _cubic_minimum(a, fa, ga, b, fb, gb)
        # a step too near an end of the bracket makes little progress: move it in by a tenth
        top, bottom = max(a, b), min(a, b)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(x, t, d)
        evaluations += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new.clone(), gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = [t, f_new, g_new.clone(), gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evaluations
