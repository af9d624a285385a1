"""The precision policy of a run: what is stored in which format, how it is
rounded, how products are summed, and where the weight update lands.

``Precision(params="fp16", accumulate="fp32", master_weights=True,
loss_scaling="dynamic")`` is the classic mixed-precision recipe (Micikevicius et
al. 2018); ``Precision()`` is plain fp32 NumPy with no simulation at all.

The model of a simulated run (storage format S, e.g. fp16):

* parameters, activations and their gradients hold values of S (float32 arrays
  whose entries belong to S);
* every elementwise result (``+``, ``*``, ``tanh``) is formed in float64 and
  rounded once into S by `softfloat.quantize` with ``rounding``. For ``+`` and
  ``*`` of two S values this is the correctly rounded S operation (products
  are exact in float64; for sums, float64 then RNE into a format of at most 25
  significant bits is innocuous double rounding, 53 >= 2p + 2);
* matrix products: products exact, summed in the accumulation format A
  (``"fp32"`` or ``"storage"``) in the policy's ``order`` (``"sequential"``: the
  exact k-order model; ``"blas"``: fp32 accumulation in an unspecified order,
  within the bound stated in `softfloat.accumulate`), or by a tensor-core model
  (``accumulate="v100"``, ``"a100"``, ``"h100"``, ``"b200"``: the block-FMA model,
  fp32 output), rounded once into S; `lp_matmul` is the one function that does it
  and it calls `softfloat.matmul_values` (one implementation for nn and softfloat);
* reductions (bias gradients, ``sum``, ``mean``) sum sequentially in A and
  round into S;
* the loss (cross-entropy, MSE) is computed in fp32, as autocast does; the loss
  gradient is rounded into S on its way back (where small gradients underflow);
* the weight update is computed in fp32 (optimizer state in fp32) and applied
  either to an fp32 master copy (then cast to S with ``rounding``) or directly
  to the S weights: ``w <- round_S(w + delta)`` with ``update_rounding``
  (``nearest_even`` or ``stochastic``); ``w + delta`` is formed in float64
  (exact unless |delta| < ulp(w) * 2**-17, when the result cannot be near a
  rounding boundary of S, so nearest-even is exact; stochastic rounding's
  probability is then exact to about 2**-40).
"""
from __future__ import annotations

import contextvars

import numpy as np
import softfloat as sf


__all__ = ["Precision", "current", "use", "storage_format", "promote", "lp_matmul", "decode",
           "LOSS_SCALING"]

LOSS_SCALING = ("none", "static", "dynamic")
ORDERS = ("sequential", "blocked", "blas")
_UPDATE_ROUNDINGS = (sf.Rounding.NEAREST_EVEN, sf.Rounding.STOCHASTIC)


def _mode(word):
    """The `softfloat.Rounding` a rounding word names (`softfloat.get_rounding`,
    the one reading of mode names), or None for a word it refuses."""
    try:
        return sf.get_rounding(word)
    except ValueError:
        return None


def _boolean(v, name):
    """A bool given as a bool (numpy's included); anything else is a TypeError."""
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(v).__name__} {v!r}")
    return bool(v)


# the exact decoding of values of a format inside float32 (decode): nearest even,
# nothing flushed, whatever the current context says
_EXACT = sf.Policy()


def storage_format(fmt):
    """A `softfloat.Format` whose values all fit in float32, or None for fp32 itself
    (plain NumPy float32, no simulation)."""
    if fmt is None:
        return None
    f = sf.get_format(fmt) if isinstance(fmt, str) else fmt
    if not isinstance(f, sf.Format):
        raise TypeError(f"expected a softfloat Format or format name, got {type(fmt).__name__}")
    if f == sf.FP32:
        return None
    # float32 must hold every value of f exactly: precision, range and subnormals.
    if not f.fits_float32:
        raise ValueError(f"format {f.name} does not fit in float32 (precision {f.precision}, "
                         f"emax {f.emax}, smallest subnormal 2**{f.min_exponent}); nn stores "
                         f"simulated values in float32 arrays")
    return f


def promote(fa, fb):
    """Result format of an elementwise op (torch's promotion): equal formats stay,
    different ones (fp16 with bf16, or either with fp32) give fp32 (None)."""
    return fa if fa == fb else None


def _seq_sum_native32(x2):
    """Sequential float32 sum over axis 0: (((x0 + x1) + x2) + ...), IEEE RNE each add."""
    if x2.shape[0] == 0:
        return np.zeros(x2.shape[1:], np.float32)
    with np.errstate(invalid="ignore", over="ignore"):      # inf - inf: NaN, as IEEE says
        return np.cumsum(x2, axis=0, dtype=np.float32)[-1]


def decode(bits, fmt):
    """Exact float32 values of encodings of fmt (no rounding: every value of a format
    that passes `storage_format` is a float32). fp16 and bf16 by a reinterpretation
    of the bits (checked against `softfloat.from_bits` over all 65536 patterns in
    tests), other formats by `softfloat.from_bits`."""
    if fmt == sf.FP16:
        return bits.view(np.float16).astype(np.float32)
    if fmt == sf.BF16:
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    # by softfloat.quantize into fp32 (exact: every value of fmt is a float32), not
    # numpy's cast, which flushes subnormals under FTZ in MXCSR
    return sf.quantize(sf.from_bits(bits, fmt), sf.FP32, policy=_EXACT, out_dtype=np.float32)


class Precision:
    """A precision policy; ``with policy:`` makes it the current one.

    Parameters
    ----------
    params : str or Format
        Storage format of parameters, activations and gradients (``"fp32"``,
        ``"fp16"``, ``"bf16"``, any softfloat format that fits in float32).
    rounding : str, optional
        Rounding of casts and elementwise results: ``nearest_even`` (default) or
        ``stochastic`` (any word `softfloat.get_rounding` reads for them); the
        policy's rounding (not together with ``policy``).
    update_rounding : str, optional
        Rounding of the weight update written into S weights (no master copy);
        default: ``rounding``.
    policy : softfloat.Policy, optional
        The policy of every rounding into S (`softfloat.quantize` under it):
        rounding, subnormals (ftz/daz), tininess, NaN rule, overflow, sr_bits,
        fast paths; default ``softfloat.Policy()``. Its ``seed`` must be None (the
        stochastic stream is ``seed=``'s); refused under a ``recipe``.
    accumulate : str, Format or a matrix-unit model
        Accumulation of matrix products and reductions: ``"fp32"``, ``"storage"``
        (= ``params``), a format name, or a GPU matrix unit: an architecture or GPU
        name (``"volta"``, ``"ampere"``, ``"hopper"``, ``"blackwell"``, ``"v100"``,
        ``"a100"``, ``"h100"``, ``"b200"``, ... any name `softfloat.tensor_core`
        takes), resolved by ``softfloat.tensor_core(name, params, "fp32")``, or a
        model object (``softfloat.tensor_core(...)``, a `softfloat.mma.MatrixUnit`
        taking ``params`` operands, or a `softfloat.BlockFMA`): matrix products by
        that model with fp32 output, reductions in fp32. Under a ``recipe``:
        ``"fp32"`` (the GEMMs in fp32, BLAS order, or as ``fp8_gemm`` says) or a
        matrix unit (the GEMMs on it, `nn.fp8`). Anything else under a recipe, or a
        non-fp32 accumulation with ``params="fp32"``, is refused (ValueError).
    order : {"sequential", "blocked", "blas"}, optional
        Summation order of matrix products (and fp32 reductions) for a format
        accumulator (default ``"sequential"``; ``"blas"`` under a recipe, whose GEMMs
        sum in BLAS order: any other order with a recipe is refused):
        ``"sequential"`` (the exact k-order model, bit for bit),
        ``"blocked"`` (exact: sequential sums of ``block`` consecutive terms, then the
        sequential sum of the block sums, every addition rounded into the
        accumulator; Higham's blocked summation) or ``"blas"`` (fp32 only: a float32
        BLAS product, the fast bounded model of `softfloat.accumulate`; reductions by
        NumPy's pairwise float32 sum).
    block : int
        Block size of ``order="blocked"`` (default 32).
    master_weights : bool
        Keep fp32 master weights in the optimizer (ignored for fp32 storage).
    loss_scaling : {"none", "static", "dynamic"}
    loss_scale : float
        The static scale, or the dynamic scaler's initial scale.
    scaler_options : dict
        Further `DynamicLossScaler` keywords (growth_interval, min_scale, ...).
    seed : int
        Seed of the stochastic-rounding stream.
    recipe : {None, "fp8_current", "fp8_delayed", "mxfp8", "nvfp4"}
        A low-precision GEMM recipe (`nn.fp8`): the operands of every matrix
        product quantized (e4m3 forward, e5m2 gradients with per-tensor current
        or delayed scaling; MXFP8 blocks of 32; NVFP4), the products summed in
        fp32; everything else in fp32 (needs ``params="fp32"``: the fp32
        parameters are the master weights).
    fp8_gemm : {"fp32", "hopper_fp8_fast", "hopper_fp8_promote128"}
        The recipe's accumulation: fp32 (BLAS order), or Hopper's fp8 tensor-core
        model without / with promotion to fp32 every 128 products (per-tensor
        recipes only; also ``"hopper_fp8_promote<N>"`` or a
        `softfloat.mx_gemm.FP8GemmModel`). Not together with ``accumulate=<arch>``.
    amax_history_len, amax_margin, amax_algo
        Delayed scaling (``recipe="fp8_delayed"``; ``amax_margin`` for current
        scaling too), Transformer Engine's defaults: 1024, 0, "max".
    grad_rounding : {"nearest_even", "stochastic"}
        Rounding of the output gradients into NVFP4 (``recipe="nvfp4"`` only).
    """

    def __init__(self, params="fp32", *, rounding=None, update_rounding=None, policy=None,
                 accumulate="fp32", master_weights=False, loss_scaling="none",
                 loss_scale=2.0 ** 16, scaler_options=None, seed=0,
                 order=None, block=32, recipe=None, fp8_gemm="fp32",
                 amax_history_len=1024, amax_margin=0, amax_algo="max",
                 grad_rounding="nearest_even"):
        self.storage = storage_format(params)
        self.params_name = "fp32" if self.storage is None else self.storage.name
        self._set_policy(policy, rounding, update_rounding, seed)
        if recipe is not None:
            # a recipe keeps everything but its GEMMs in fp32 (params="fp32"): options
            # that would act only on simulated storage are refused, not ignored
            if order not in (None, "blas"):
                raise ValueError(f"order={order!r}: a recipe's GEMMs sum in fp32 in BLAS order "
                                 f"(order='blas'), or on a matrix unit (accumulate=<arch>)")
            for name, r in (("rounding", self._policies[0].rounding),
                            ("update_rounding", self._policies[1].rounding)):
                if r != sf.Rounding.NEAREST_EVEN:
                    raise ValueError(f"{name}={r.label!r} rounds simulated storage, which a "
                                     f"recipe keeps in fp32; the rounding of a recipe's "
                                     f"gradients is grad_rounding= (recipe='nvfp4')")
            if self.policy != sf.Policy():
                raise ValueError(f"policy={self.policy!r} rounds simulated storage, which a "
                                 f"recipe keeps in fp32 (give no policy with a recipe)")
            order = "blas"
        elif order is None:
            order = "sequential"
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        self.order = order
        if not isinstance(block, (int, np.integer)) or isinstance(block, bool) or block < 1:
            raise ValueError(f"block must be a positive int, got {block!r}")
        self.block = int(block)
        self.tensor_core = None
        unit = _arch_model(accumulate)
        self.recipe_unit = None               # a recipe's matrix unit (accumulate=<arch>)
        if recipe is not None and unit is None and not _is_fp32(accumulate):
            raise ValueError(f"accumulate={accumulate!r}: a recipe's GEMMs sum in fp32 "
                             f"(accumulate='fp32') or on a matrix unit (an architecture or GPU "
                             f"name such as 'hopper', or a softfloat.tensor_core(...) model)")
        if recipe is not None:
            acc = None
            self.recipe_unit = unit
            key = "fp32" if unit is None else _unit_name(unit)
        elif unit is not None:
            if self.storage is None:
                raise ValueError(f"accumulate={accumulate!r}: a tensor-core model needs "
                                 f"simulated storage (params='fp16' or 'bf16')")
            if isinstance(unit, str):
                from softfloat.mma import tensor_core
                self.tensor_core = tensor_core(unit, self.storage, "fp32")      # validates
            else:
                _check_unit_inputs(unit, self.storage)
                self.tensor_core = unit
            key = _unit_name(unit)
            self.tensor_core_name = key
            acc = None
        else:
            key = accumulate.strip().lower() if isinstance(accumulate, str) else None
            if key in ("storage", "params"):
                acc = self.storage
            else:
                acc = sf.get_format(accumulate) if isinstance(accumulate, str) else accumulate
                if not isinstance(acc, sf.Format):
                    raise TypeError(f"accumulate: expected 'fp32', 'storage', a format, an "
                                    f"architecture or GPU name, or a tensor-core model, got "
                                    f"{accumulate!r}")
                acc = None if acc == sf.FP32 else storage_format(acc)
            if acc is not None and self.storage is None:
                raise ValueError(f"accumulate={accumulate!r} sums simulated values: it needs "
                                 f"params= a low-precision format (plain fp32 runs sum in "
                                 f"float32)")
        self.acc = acc                                   # None: fp32
        self.accumulate_name = ("fp32" if acc is None else acc.name) \
            if (self.tensor_core is None and self.recipe_unit is None) else key
        if order == "blas" and acc is not None:
            raise ValueError("order='blas' accumulates in fp32 (accumulate='fp32')")
        # The accumulation model of matrix products, as softfloat.matmul takes it.
        if self.tensor_core is not None:
            self.acc_model = self.tensor_core
        else:
            self.acc_model = sf.Accumulator(sf.FP32 if acc is None else acc,
                                            "nearest_even", order,
                                            self.block if order == "blocked" else None)
        self.master_weights = (_boolean(master_weights, "master_weights")
                               and self.storage is not None)
        if loss_scaling not in LOSS_SCALING:
            raise ValueError(f"loss_scaling must be one of {LOSS_SCALING}, got {loss_scaling!r}")
        self.loss_scaling = loss_scaling
        if (isinstance(loss_scale, (bool, np.bool_))
                or not isinstance(loss_scale, (int, float, np.integer, np.floating))):
            raise TypeError(f"loss_scale must be a number (int or float), got "
                            f"{type(loss_scale).__name__} {loss_scale!r}")
        self.loss_scale = float(loss_scale)
        if not (np.isfinite(self.loss_scale) and self.loss_scale > 0):
            raise ValueError(f"loss_scale must be a positive finite number, got {loss_scale!r}")
        if loss_scaling != "none":
            from .scaler import MIN_SCALE
            s32 = np.float32(self.loss_scale)
            if not (np.isfinite(s32) and s32 >= MIN_SCALE):
                raise ValueError(f"loss_scale must be a finite float32 >= 2**-126 "
                                 f"(nn.scaler.MIN_SCALE), got {loss_scale!r}")
        self.scaler_options = dict(scaler_options or {})
        self.seed = seed
        self.simulated = self.storage is not None
        self.recipe = recipe
        self.fp8 = None
        if recipe is not None:
            from .fp8 import FP8Recipe
            if self.storage is not None:
                raise ValueError(f"recipe={recipe!r} keeps parameters, activations and "
                                 f"gradients in fp32 (the master weights): use params='fp32', "
                                 f"got {self.params_name!r}")
            self.fp8 = FP8Recipe(recipe, fp8_gemm=fp8_gemm, amax_history_len=amax_history_len,
                                 amax_margin=amax_margin, amax_algo=amax_algo,
                                 grad_rounding=grad_rounding, seed=seed,
                                 unit=self.recipe_unit)
        elif ((fp8_gemm, amax_history_len, amax_margin, amax_algo) != ("fp32", 1024, 0, "max")
              or _mode(grad_rounding) != sf.Rounding.NEAREST_EVEN):
            raise ValueError("fp8_gemm, amax_history_len, amax_margin, amax_algo and "
                             "grad_rounding are options of a recipe (recipe=...)")
        self.reset_stats()

    def _set_policy(self, policy, rounding, update_rounding, seed):
        """The policy of every rounding into the storage format (`softfloat.Policy`,
        parsed and checked by softfloat), its rounding replaced by ``rounding=``
        (giving both is a TypeError, as in softfloat), and the update's policy."""
        if policy is None:
            policy = sf.Policy() if rounding is None else sf.Policy(rounding=rounding)
        elif not isinstance(policy, sf.Policy):
            raise TypeError(f"policy must be a softfloat.Policy, got {type(policy).__name__}")
        elif rounding is not None:
            raise TypeError("give policy= or rounding=, not both (policy.replace(rounding=...) "
                            "changes its rounding)")
        if policy.seed is not None:
            raise ValueError("the stochastic-rounding stream of a Precision is its seed= "
                             "(give a policy with seed=None)")
        policy = policy.replace(context=None)
        up = policy if update_rounding is None else policy.replace(rounding=update_rounding)
        for name, p in (("rounding", policy), ("update_rounding", up)):
            if p.rounding not in _UPDATE_ROUNDINGS:
                raise ValueError(f"{name} must be 'nearest_even' or 'stochastic', got "
                                 f"{p.rounding.label!r}")
        self.policy = policy
        self.rounding = policy.rounding.label
        self.update_rounding = up.rounding.label
        self.rng = np.random.default_rng(seed)
        # stochastic rounding draws from this stream (the generator itself; the
        # deterministic modes draw nothing)
        self._policies = (policy.replace(seed=self.rng), up.replace(seed=self.rng))
        self._resolved = {}
        # the elementwise results' intermediate (see _wide)
        self._narrow_ok = policy.rounding == sf.Rounding.NEAREST_EVEN

    def _policy(self, which=0):
        """The call's `softfloat.Policy` (0: casts and results, 1: the update), bound
        to the current context (softfloat.Policy.resolve, kept per context)."""
        p = self._policies[which]
        ctx = sf.getcontext()
        r = self._resolved.get((which, id(ctx)))
        if r is None or r.context is not ctx:
            r = self._resolved[(which, id(ctx))] = sf.Policy.resolve(policy=p)
            if len(self._resolved) > 16:
                self._resolved = {(which, id(ctx)): r}
        return r

    def __repr__(self):
        """Every option: the main ones always, the others where they differ from
        the defaults (the repr evaluates to an equal policy)."""
        items = [("params", self.params_name), ("rounding", self.rounding),
                 ("update_rounding", self.update_rounding),
                 ("accumulate", self.accumulate_name), ("order", self.order),
                 ("master_weights", self.master_weights),
                 ("loss_scaling", self.loss_scaling)]
        optional = [("loss_scale", self.loss_scale, 2.0 ** 16),
                    ("scaler_options", self.scaler_options, {}),
                    ("seed", self.seed, 0), ("block", self.block, 32)]
        if self.fp8 is not None:
            items.append(("recipe", self.recipe))
            optional += [("fp8_gemm", self.fp8.gemm, "fp32"),
                         ("amax_history_len", self.fp8.history_len, 1024),
                         ("amax_margin", self.fp8.margin, 0),
                         ("amax_algo", self.fp8.algo, "max"),
                         ("grad_rounding", self.fp8.grad_rounding, "nearest_even")]
        items += [(k, v) for k, v, default in optional if v != default]
        text = ", ".join(f"{k}={v!r}" for k, v in items)
        pol = _policy_words(self.policy)
        if pol:
            # the policy without its rounding (the rounding= above): policy= and
            # rounding= together are refused, so the rounding goes into the policy
            pol = f"rounding={self.rounding!r}, " + pol
            text = text.replace(f"rounding={self.rounding!r}, ", "", 1)
            text += f", policy=softfloat.Policy({pol})"
        return "Precision(" + text + ")"

    # ---- context ----------------------------------------------------------
    def __enter__(self):
        self._tokens = getattr(self, "_tokens", [])
        self._tokens.append(_current.set(self))
        return self

    def __exit__(self, *exc):
        _current.reset(self._tokens.pop())

    # ---- statistics -------------------------------------------------------
    def reset_stats(self):
        """Counts of gradient values rounded into S (every gradient, and the weight
        gradients alone): nonzero before the rounding, and zero after it."""
        self.grad_nonzero = self.grad_underflow = 0
        self.wgrad_nonzero = self.wgrad_underflow = 0

    @property
    def underflow_fraction(self):
        """Share of the nonzero gradient values that rounded to zero in S."""
        return self.grad_underflow / self.grad_nonzero if self.grad_nonzero else 0.0

    @property
    def weight_underflow_fraction(self):
        return self.wgrad_underflow / self.wgrad_nonzero if self.wgrad_nonzero else 0.0

    # ---- rounding ---------------------------------------------------------
    def round(self, x, fmt, kind="value", rounding=None):
        """Round values (float32/64) into ``fmt`` with this policy (its rounding, or
        ``rounding``: the policy's or the update's, ``"nearest_even"`` or
        ``"stochastic"``) by `softfloat.quantize` (its value-to-value fast path
        where the policy allows it); float32 array out. ``kind="grad"``
        (``"wgrad"`` for weight gradients) counts the nonzero values that round to
        zero."""
        if fmt is None:
            return x
        if rounding is None or rounding == self.rounding:
            pol = self._policy(0)
        elif rounding == self.update_rounding:
            pol = self._policy(1)
        else:
            pol = self._other_policy(rounding)
        x = np.asarray(x)
        q = sf.quantize(x, fmt, policy=pol, out_dtype=np.float32)
        if kind != "value":
            # zero rounds to zero: the nonzero values that round to zero are the zeros
            # of q less the zeros of x (a NaN counts as nonzero, as x != 0 says)
            z = np.count_nonzero(x == 0)
            n, u = x.size - z, np.count_nonzero(q == 0) - z
            self.grad_nonzero += n
            self.grad_underflow += u
            if kind == "wgrad":
                self.wgrad_nonzero += n
                self.wgrad_underflow += u
        return q

    def _other_policy(self, rounding):
        """The policy with another rounding (a word `softfloat.get_rounding` reads)."""
        p = self.policy.replace(rounding=rounding)
        if p.rounding not in _UPDATE_ROUNDINGS:
            raise ValueError(f"rounding must be 'nearest_even' or 'stochastic', got "
                             f"{rounding!r}")
        return sf.Policy.resolve(policy=p.replace(seed=self.rng))

    def cast(self, x, fmt):
        """Autocast: ``x`` rounded into ``fmt`` (None: left as it is)."""
        return x if fmt is None else self.round(x, fmt)

    def cast_grad(self, g, fmt, dtype, shape, kind="grad"):
        """A gradient contribution (possibly not yet rounded) for a tensor of format
        ``fmt``, dtype and shape: the one place where gradients are rounded into S."""
        g = np.asarray(g)
        if g.shape != tuple(shape):
            g = np.broadcast_to(g, shape)
        if fmt is None:
            return np.array(g, dtype=dtype)                  # a fresh, writable copy
        return self.round(np.ascontiguousarray(g), fmt, kind=kind)

    # ---- elementwise ------------------------------------------------------
    def _wide(self, fmt):
        """Where an exact-enough intermediate of + or * of two fmt values lives:
        float32 for nearest-even into formats of at most 11 bits (24 >= 2p + 2:
        the double rounding is innocuous), float64 otherwise (stochastic rounding
        must see the exact value: products are exact in float64)."""
        return np.float32 if self._narrow_ok and fmt.precision <= 11 else np.float64

    def add(self, a, b, fmt):
        if fmt is None:
            return a + b
        with np.errstate(over="ignore", invalid="ignore"):
            return self.round(np.add(a, b, dtype=self._wide(fmt)), fmt)

    def mul(self, a, b, fmt, final=True):
        """a * b rounded into fmt (final=False: the exact float64 product)."""
        if fmt is None:
            return a * b
        if not final:
            return np.multiply(a, b, dtype=np.float64)       # exact
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return self.round(np.multiply(a, b, dtype=self._wide(fmt)), fmt)

    def unary(self, f, x, fmt):
        if fmt is None:
            return f(x)
        return self.round(f(x.astype(np.float64)), fmt)

    # ---- reductions -------------------------------------------------------
    def seq_sum(self, x2, fmt, final=True):
        """Sequential sum over axis 0 in the accumulation format, rounded into fmt
        (final=False: the accumulator's value)."""
        if self.acc is None:
            x32 = x2.astype(np.float32, copy=False)
            if self.order == "blas":
                with np.errstate(invalid="ignore", over="ignore"):
                    s = x32.sum(axis=0, dtype=np.float32)
            elif self.order == "blocked" and x32.shape[0] > self.block:
                # block sums (sequential), then their sequential sum: IEEE float32 adds
                s = None
                for k0 in range(0, x32.shape[0], self.block):
                    b = _seq_sum_native32(x32[k0:k0 + self.block])
                    with np.errstate(invalid="ignore", over="ignore"):
                        s = b if s is None else s + b
            else:
                s = _seq_sum_native32(x32)
        elif x2.shape[0] == 0:
            s = np.zeros(x2.shape[1:], np.float32)
        else:
            # terms are values of fmt (rounded on their way in): softfloat's sequential
            # sum in the accumulator format, on encodings
            bits = sf.to_bits(np.ascontiguousarray(x2.T), fmt, "nearest_even")
            with np.errstate(invalid="ignore"):
                s = decode(sf.sum(bits, fmt, axis=-1, acc=self.acc_model), self.acc)
        return self.round(s, fmt) if final else s

    def sum(self, x, axis, keepdims, fmt, final=True):
        if fmt is None:
            return np.asarray(x.sum(axis=axis, keepdims=keepdims))
        axes = tuple(range(x.ndim)) if axis is None else tuple(
            a % x.ndim for a in np.atleast_1d(axis))
        rest = tuple(a for a in range(x.ndim) if a not in axes)
        x2 = np.transpose(x, axes + rest).reshape((-1,) + tuple(x.shape[a] for a in rest))
        s = np.asarray(self.seq_sum(x2, fmt, final))
        if keepdims:
            s = s.reshape(tuple(1 if a in axes else n for a, n in enumerate(x.shape)))
        return s

    def sum_to(self, g, shape, fmt):
        """Sum a gradient over the axes along which an operand of ``shape`` was
        broadcast (g is rounded into fmt first; the sum is left unrounded)."""
        shape = tuple(shape)
        if g.shape == shape:
            return g
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                          if n == 1 and g.shape[i + lead] != 1)
        if not axes:
            return g.reshape(shape)
        if fmt is not None:
            g = self.round(g, fmt)
        return np.asarray(self.sum(g, axes, False, fmt, final=False)).reshape(shape)

    # ---- matrix products --------------------------------------------------
    def matmul_format(self, fa, fb):
        return self.storage if self.simulated else promote(fa, fb)

    def matmul(self, a, b, fmt, final=True):
        """a @ b of values of fmt (see `lp_matmul`); final=False: the accumulator."""
        if fmt is None:
            return a @ b
        return lp_matmul(a, b, fmt, self.acc_model, self, final)


def _policy_words(p):
    """The fields of a `softfloat.Policy` that differ from the default's, besides
    the rounding, as keyword text (empty for the default)."""
    d = sf.Policy(rounding=p.rounding)
    out = []
    for k in ("ftz", "daz", "tininess", "nan", "overflow", "saturation", "sr_bits",
              "fast_paths"):
        v = getattr(p, k)
        if v != getattr(d, k):
            if k == "nan":
                v = v.mode if v.pattern is None else v.pattern
            out.append(f"{k}={v!r}")
    return ", ".join(out)


def _arch_model(accumulate):
    """What ``accumulate`` names when it is a matrix-unit model: the model object
    itself (a `softfloat.mma.MatrixUnit` or a `softfloat.BlockFMA`), or the lower-case
    architecture / GPU name (``"hopper"``, ``"h100"``, ``"a100"``, ... resolved by
    `softfloat.tensor_core` for the operands' format, which lists the valid names);
    None for "fp32", "storage", a format name or a Format."""
    if isinstance(accumulate, sf.BlockFMA) or _is_unit(accumulate):
        return accumulate
    if not isinstance(accumulate, str):
        return None
    key = accumulate.strip().lower()
    if key in ("fp32", "storage", "params"):
        return None
    try:
        sf.get_format(key)
        return None
    except ValueError:
        return key


def _is_fp32(accumulate):
    try:
        return sf.get_format(accumulate) == sf.FP32
    except (ValueError, TypeError):
        return False


def _is_unit(x):
    try:
        from softfloat.mma import MatrixUnit
    except ImportError:          # pragma: no cover - the model family is part of softfloat
        return False
    return isinstance(x, MatrixUnit)


def _unit_name(unit):
    if isinstance(unit, str):
        return unit
    if _is_unit(unit):
        return f"{unit.arch}:{unit.instruction}"
    return repr(unit)


def _check_unit_inputs(unit, fmt):
    """A matrix-unit model given as an object must take operands of fmt."""
    if _is_unit(unit) and not (unit.a_fmt == fmt and unit.b_fmt == fmt):
        raise ValueError(f"accumulate: the model {unit.instruction!r} on {unit.arch} takes "
                         f"{unit.a_fmt.name} x {unit.b_fmt.name} operands, the policy stores "
                         f"{fmt.name}")


def lp_matmul(a, b, fmt, acc=None, policy=None, final=True):
    """``a @ b`` for 2-d float32 arrays of values of ``fmt``, by
    `softfloat.matmul_values` (the validated-values entry point, ``check=False``:
    nn's operands are values of ``fmt`` by construction). Products are exact, the
    sum follows ``acc``: None (the policy's model: ``policy.acc_model``), a format
    (sequential, nearest-even), or a `softfloat.Accumulator` / `softfloat.BlockFMA`.
    The sum is rounded once into ``fmt`` with the policy's rounding. Returns float32
    values of ``fmt`` (``final=False``: the accumulator's values, not yet rounded).
    Shapes are checked: (m, k) @ (k, n), else ValueError."""
    P = policy if policy is not None else current()
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, np.ndarray) or x.ndim != 2 or x.dtype not in (np.float32,
                                                                           np.float64):
            raise ValueError(f"lp_matmul: {name} must be a 2-d float32 array, got "
                             f"{type(x).__name__} {getattr(x, 'shape', '')} "
                             f"{getattr(x, 'dtype', '')}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"lp_matmul: shapes {a.shape} and {b.shape} do not align "
                         f"(k = {a.shape[1]} vs {b.shape[0]})")
    if acc is None:
        model = P.acc_model
    elif isinstance(acc, (sf.Accumulator, sf.BlockFMA)) or _is_unit(acc):
        model = acc
    else:
        model = sf.Accumulator(acc, "nearest_even", "sequential")
    if _is_unit(model):
        # a GPU matrix unit (softfloat.mma): the values are values of fmt (exact
        # encodings), K chained instruction after instruction, fp32 output
        from softfloat.mma import mma
        with np.errstate(invalid="ignore"):
            A = sf.to_bits(a, model.a_fmt)
            B = sf.to_bits(b, model.b_fmt)
            out = sf.from_bits(mma(model, A, B), model.out_fmt).astype(np.float32) \
                if a.shape[1] else np.zeros((a.shape[0], b.shape[1]), np.float32)
    else:
        out = sf.matmul_values(a, b, fmt, acc=model, check=False, out_dtype=np.float32)
    return P.round(out, fmt) if final else out


_DEFAULT = Precision()
_current: contextvars.ContextVar = contextvars.ContextVar("nn_precision", default=_DEFAULT)


def current() -> Precision:
    """The policy in force (plain fp32 outside any ``with policy:`` block)."""
    return _current.get()


def use(policy: Precision):
    """``with nn.precision.use(policy):`` -- the same as ``with policy:``."""
    if not isinstance(policy, Precision):
        raise TypeError(f"expected a Precision, got {type(policy).__name__}")
    return policy
