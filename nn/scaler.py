"""Loss scalers with the semantics of torch's ``torch.amp.GradScaler``.

The scale is a float32 number (torch keeps it in a 0-dim float32 tensor). A
training step multiplies the loss by ``scale`` (in fp32), runs backward, then
`unscale` multiplies every gradient by ``float32(1 / scale)`` (the reciprocal
taken in float64 and rounded to float32, as GradScaler does) and reports
whether any gradient was not finite (checked on the scaled values). The caller
skips the optimizer step when it was, and calls ``update(found_inf)``.

`DynamicLossScaler.update` is torch's ``_amp_update_scale_``: on an inf/NaN the
scale is multiplied by ``backoff_factor`` at once and the count of clean steps
restarts; after ``growth_interval`` clean steps in a row it is multiplied by
``growth_factor`` if the result is finite in float32. Each product is formed in
float64 and rounded to float32 (the CPU kernel multiplies a float by a double).

Two options follow DeepSpeed's ``DynamicLossScaler``: ``min_scale`` (the scale
never backs off below it; None, torch's behaviour, means no floor) and
``hysteresis`` (DeepSpeed's ``delayed_shift``: the number of overflows tolerated
before backing off; 1 is torch's behaviour. A backoff leaves the count at 1,
and growth restores it, or every clean step with ``consecutive_hysteresis``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["StaticLossScaler", "DynamicLossScaler", "NoLossScaler", "unscale", "MIN_SCALE"]

#: The smallest scale any scaler holds: 2**-126, the smallest normal float32, so
#: that float32(1 / scale) = 2**126 stays finite and unscaling is exact. (torch's
#: GradScaler has no floor: a run of overflows can take its scale to 0, after which
#: 1/scale is inf and every gradient 0 * inf = NaN.) A dynamic scaler's backoff
#: stops here; a smaller initial or static scale is refused.
MIN_SCALE = 2.0 ** -126


def unscale(grads, scale):
    """Gradients (float arrays) times float32(1/scale), in float32, and whether any
    gradient was inf or NaN, scaled or unscaled (then the step must be skipped: a
    step never applies a non-finite gradient)."""
    s32 = np.float32(scale)
    if not (np.isfinite(s32) and s32 >= MIN_SCALE):
        raise ValueError(f"unscale: scale must be a finite float32 >= 2**-126, got {scale!r}")
    inv = np.float32(1.0 / np.float64(s32))
    found_inf = False
    out = []
    for g in grads:
        g32 = np.asarray(g, dtype=np.float32)
        if not np.isfinite(g32).all():
            found_inf = True
        if inv != 1:
            with np.errstate(over="ignore"):
                g32 = g32 * inv
            if not found_inf and not np.isfinite(g32).all():
                found_inf = True               # finite scaled, overflowing unscaled
        out.append(g32)
    return out, found_inf


class NoLossScaler:
    """No loss scaling: scale 1, and steps are never skipped (an inf or NaN
    gradient reaches the weights, as it would without a scaler)."""

    kind = "none"
    skips = False

    def __init__(self):
        self.scale = 1.0
        self.history = []

    def __repr__(self):
        return "NoLossScaler()"

    def update(self, found_inf):
        self.history.append((self.scale, bool(found_inf)))


class StaticLossScaler:
    """A constant scale; steps with inf/NaN gradients are skipped."""

    kind = "static"
    skips = True

    def __init__(self, scale):
        s = np.float32(scale)
        if not (np.isfinite(s) and s >= MIN_SCALE):
            raise ValueError(f"scale must be a finite float32 >= 2**-126 (MIN_SCALE), "
                             f"got {scale!r}")
        self.scale = float(s)
        self.history = []

    def __repr__(self):
        return f"StaticLossScaler({self.scale!r})"

    def update(self, found_inf):
        self.history.append((self.scale, bool(found_inf)))


class DynamicLossScaler:
    """torch's GradScaler rule (see the module docstring).

    Parameters
    ----------
    init_scale, growth_factor, backoff_factor, growth_interval
        As in ``torch.amp.GradScaler``.
    min_scale : float, optional
        DeepSpeed's floor (default None: torch's behaviour, except that no scale
        goes below `MIN_SCALE` = 2**-126, where torch's would reach 0).
    hysteresis : int
        Overflows tolerated before a backoff (DeepSpeed's ``delayed_shift``; 1: torch).
    consecutive_hysteresis : bool
        Restore the tolerance after every clean step (DeepSpeed's option).
    """

    kind = "dynamic"
    skips = True

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, min_scale=None, hysteresis=1,
                 consecutive_hysteresis=False):
        if not growth_factor > 1.0:
            raise ValueError("growth_factor should be > 1")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError("backoff_factor should be in (0, 1)")
        if not (isinstance(growth_interval, (int, np.integer)) and growth_interval >= 1):
            raise ValueError("growth_interval should be a positive integer")
        if not (isinstance(hysteresis, (int, np.integer)) and hysteresis >= 1):
            raise ValueError("hysteresis should be a positive integer")
        s = np.float32(init_scale)
        if not (np.isfinite(s) and s >= MIN_SCALE):
            raise ValueError(f"init_scale must be a finite float32 >= 2**-126 (MIN_SCALE), "
                             f"got {init_scale!r}")
        self._scale = s
        self.init_scale = float(s)
        self.growth_factor = float(growth_factor)
        self.backoff_factor = float(backoff_factor)
        self.growth_interval = int(growth_interval)
        self.min_scale = None if min_scale is None else np.float32(min_scale)
        self.hysteresis = int(hysteresis)
        self.consecutive_hysteresis = bool(consecutive_hysteresis)
        self.growth_tracker = 0
        self._hysteresis_left = self.hysteresis
        self.history = []

    @property
    def scale(self):
        return float(self._scale)

    def __repr__(self):
        """The constructor's arguments (every option), then the current state
        when a step has been taken."""
        opts = [f"init_scale={self.init_scale!r}", f"growth_factor={self.growth_factor!r}",
                f"backoff_factor={self.backoff_factor!r}",
                f"growth_interval={self.growth_interval!r}"]
        if self.min_scale is not None:
            opts.append(f"min_scale={float(self.min_scale)!r}")
        if self.hysteresis != 1:
            opts.append(f"hysteresis={self.hysteresis!r}")
        if self.consecutive_hysteresis:
            opts.append("consecutive_hysteresis=True")
        r = "DynamicLossScaler(" + ", ".join(opts) + ")"
        if self.history:
            skipped = sum(inf for _, inf in self.history)
            r = (f"<{r}: scale {self.scale!r} after {len(self.history)} steps, "
                 f"{skipped} skipped>")
        return r

    def update(self, found_inf):
        """Advance one step; ``found_inf``: whether this step's gradients had inf/NaN."""
        self.history.append((self.scale, bool(found_inf)))
        if found_inf:
            self.growth_tracker = 0
            if self._hysteresis_left <= 1:
                new = np.float32(np.float64(self._scale) * self.backoff_factor)
                if self.min_scale is not None:
                    new = max(new, self.min_scale)
                self._scale = np.float32(max(new, np.float32(MIN_SCALE)))
            else:
                self._hysteresis_left -= 1
            return
        if self.consecutive_hysteresis:
            self._hysteresis_left = self.hysteresis
        successful = self.growth_tracker + 1
        if successful == self.growth_interval:
            with np.errstate(over="ignore"):
                new = np.float32(np.float64(self._scale) * self.growth_factor)
            if np.isfinite(new):
                self._scale = new
            self.growth_tracker = 0
            self._hysteresis_left = self.hysteresis
        else:
            self.growth_tracker = successful

    def state_dict(self):
        return {"scale": self.scale, "growth_factor": self.growth_factor,
                "backoff_factor": self.backoff_factor, "growth_interval": self.growth_interval,
                "_growth_tracker": self.growth_tracker}
