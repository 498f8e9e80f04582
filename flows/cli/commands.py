"""Command line: ``flows train | sample | eval | experiment``, a thin layer over
:mod:`flows.runs.run` and :mod:`flows.runs.sweeps`.

Each sub-command is one ``add_*`` function (its options, each with unit and default in
``--help``) and one ``cmd_*`` function (turns the parsed options into one :mod:`flows.runs.run`
call). :func:`main` runs them through :func:`_runkit.cli_main`: one line on stderr and exit code 2
for bad input, 1 for a failed (e.g. diverged) run, 130 for Ctrl-C; ``--debug`` adds the traceback.
Building the parser imports no torch: each ``cmd_*`` imports its run module when it runs, so
``flows --help`` answers at once.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _runkit import cli_main
from _runkit.cli import add_sweep_arguments, out_path, sweep_options, worker_count
from _runkit.runtime import set_threads

from ..training.config import TrainConfig
from ._parsing import (
    COUPLINGS,
    DEFAULTS,
    EVAL_METRICS,
    MEMORIZATION_NS,
    METHODS,
    NULL_RATE,
    OT_SOLVERS,
    REGIMES,
    RISK_NS,
    RISK_SEEDS,
    TRAIN_METRICS,
    VERDICT_ALPHA,
    VERDICT_PERMUTATIONS,
    Formatter,
    device,
    experiment_common,
    ints,
    json_object,
    opt,
    path_name,
    theory_steps,
)
from .stopping import STOPPING_KINDS, add_stopping_kinds, run_stopping_kind

__all__ = ["main", "build_parser"]


def add_train(sub) -> None:
    """Options of ``flows train``."""
    t = sub.add_parser("train", formatter_class=Formatter,
                       help="train a field; writes model.pt, config.json, metrics.json, "
                            "timing.json and figures into --out (resumes from its checkpoint)",
                       description="Train a two-layer ReLU velocity field by flow matching.")
    t.add_argument("--data", required=True,
                   help="target: dataset name (moons, 8gaussians, circles, checkerboard, "
                        "pinwheel, swissroll, spirals, gmm<d>, digits, mnist, mnist14, "
                        "mnist14-gmm; MNIST after make mnist) or a .npy/.csv file")
    t.add_argument("--out", required=True, type=out_path, help="run directory (created; locked)")
    opt(t, "--source", "source distribution: dataset name or file (default: N(0, I))")
    opt(t, "--width", "hidden width m (neurons)", type=int)
    opt(t, "--regime", "'practice' (both layers, Adam, minibatches) or 'theory' (A fixed, "
                       "full-batch gradient descent)", choices=REGIMES)
    opt(t, "--coupling", "pairing of source and data points in a batch", choices=COUPLINGS)
    opt(t, "--path", "conditional probability path: linear, vp, target or affine:ALPHA,SIGMA "
                     "(x_t = alpha_t x1 + sigma_t x0; schedules t, 1-t, t^2, t^3, 1-t^2, "
                     "(1-t)^2, sin, cos, smoothstep, 1-smoothstep)", type=path_name)
    opt(t, "--steps", "optimisation steps", type=int)
    opt(t, "--batch", "minibatch size in points (practice regime)", type=int)
    opt(t, "--lr", "step size (default: 0.1 for the built-in field in practice, Adam with "
                   "warm-up and cosine decay; 0.03 with --model-class; 2.0 for theory, "
                   "gradient descent)", type=float)
    opt(t, "--seed", "seed of everything random in the run (integer >= 0)", type=int)
    opt(t, "--sigma-min", "path smoothing sigma_min, in data units, in [0, 1)", type=float)
    opt(t, "--n-train", "training points (default: 20000 for practice, all rows of a finite "
                        "dataset up to that; 256 for theory)", type=int)
    opt(t, "--k-draws", "fixed (t, x0) draws per training point (theory regime)", type=int)
    opt(t, "--n-eval", "held-out points for the evaluation, and size of the floor sample",
        type=int)
    opt(t, "--fourier", "Fourier frequencies of t in the input features (default: 1 for "
                        "practice, 0 for theory)", type=int)
    opt(t, "--checkpoint-every", "steps between checkpoints", type=int)
    opt(t, "--model-class", "a velocity network of your own, 'package.module:Class' (its "
                            "forward(x (B, d), t (B, 1)[, c (B,)]) returns (B, d)); default: "
                            "the built-in two-layer ReLU field; for images: "
                            "flows.field.conv:ConvField", dest="model")
    opt(t, "--model-args", "JSON object of keyword arguments of --model-class (default: none)",
        type=json_object, dest="model_args")
    opt(t, "--labels", "class labels for class-conditional training: 'data' (the data set's "
                       "own, digits) or a .npy/.csv file of one integer per data row "
                       "(default: none, unconditional)")
    _add_training_options(t)
    t.add_argument("--device", default="cpu", type=device,
                   help="cpu or cuda: the model, the batches and the OT costs (the assignment "
                        "itself runs on the CPU)")
    t.add_argument("--guidance", type=float, default=1.0,
                   help="classifier-free guidance scale of the evaluation samples (labels)")
    t.add_argument("--method", "--solver", choices=METHODS, default="midpoint", dest="method",
                   help="ODE method (torchdiffeq's name) of the evaluation samples")
    t.add_argument("--sample-steps", type=int, default=20, dest="sample_steps",
                   help="solver steps from t=0 to t=1 of the evaluation samples")
    t.add_argument("--fresh", action="store_true",
                   help="ignore an existing checkpoint in --out and start over")
    t.add_argument("--workers", type=worker_count,
                   help="threads preparing coming batches besides the training thread (default: "
                        "one per other core for the ot and sinkhorn couplings, 0 otherwise); "
                        "results do not depend on it")
    t.set_defaults(func=cmd_train)


def _add_training_options(t) -> None:
    """Options of ``flows train`` about how the field is trained: label dropout, the OT
    solver, the weight average, the time sampling, gradient clipping and the warm-up."""
    opt(t, "--label-dropout", "probability that a training label becomes the null label "
                              "(classifier-free guidance), in [0, 1)", type=float)
    opt(t, "--ot-solver", "exact assignment solver of --coupling ot", choices=OT_SOLVERS)
    opt(t, "--ema", "decay of an exponential moving average of the weights (practice "
                    "regime), e.g. 0.999; the average is saved and sampled; 0: none",
        type=float)
    opt(t, "--ema-warmup", "with --ema: the decay of update n is min(EMA, n / (n + 9)), so the "
                           "average covers about the last tenth of the steps early in a run "
                           "(default: off, a constant decay)",
        action="store_true")
    opt(t, "--time-sampling", "distribution of the training times t (practice regime): "
                              "uniform, logit-normal or logit-normal:MEAN,STD")
    opt(t, "--clip-grad", "clip the global norm of the gradient to this value before each "
                          "update (practice regime; default: no clipping)", type=float)
    opt(t, "--warmup", "steps of linear learning-rate warm-up (practice regime; default: "
                       "min(200, steps / 10) for the built-in field, 0 with --model-class)",
        type=int)


def cmd_train(a: argparse.Namespace):
    """``flows train``: :func:`flows.runs.run.run_training` with the options as TrainConfig."""
    from ..runs.run import run_training

    _common(a)
    cfg = TrainConfig.from_dict({k: getattr(a, k) for k in DEFAULTS if hasattr(a, k)})
    return run_training(cfg, a.out, fresh=a.fresh, method=a.method, sample_steps=a.sample_steps,
                        workers=a.workers, device=a.device, guidance=a.guidance)


def add_sample(sub) -> None:
    """Options of ``flows sample``."""
    s = sub.add_parser("sample", formatter_class=Formatter,
                       help="draw samples from a trained model into a .npy file (with a "
                            ".json sidecar)",
                       description="Draw samples from a trained model.")
    s.add_argument("--model", required=True, type=Path,
                   help="training --out directory or its model.pt")
    s.add_argument("--n", required=True, type=int, help="number of samples (points)")
    s.add_argument("--out", required=True, type=out_path,
                   help="FILE.npy to write (and its sidecar FILE.json); never replaces files "
                        "flows sample did not write")
    s.add_argument("--method", "--solver", choices=METHODS, default="midpoint", dest="method",
                   help="ODE method (torchdiffeq's name)")
    s.add_argument("--label", type=int,
                   help="class of every sample (class-conditional model; default: classes "
                        "0..K-1 in turn)")
    s.add_argument("--guidance", type=float, default=1.0,
                   help="classifier-free guidance scale (class-conditional model)")
    s.add_argument("--device", default="cpu", type=device,
                   help="cpu, cuda or cuda:N")
    s.add_argument("--steps", type=int, default=20,
                   help="solver steps from t=0 to t=1 (fixed-step solvers)")
    s.add_argument("--seed", type=int, default=0, help="seed of the source points (>= 0)")
    s.add_argument("--trust-module", action="append", default=[], metavar="MODULE",
                   help="module of a model of your own (--model-class) that may be imported to "
                        "rebuild it; repeatable (default: none: a model file cannot make flows "
                        "import code)")
    s.set_defaults(func=cmd_sample)


def cmd_sample(a: argparse.Namespace):
    """``flows sample``: :func:`flows.runs.run.run_sample`."""
    from ..runs.run import run_sample

    _common(a)
    return run_sample(a.model, a.n, a.out, a.method, a.steps, a.seed, label=a.label,
                      guidance=a.guidance, device=a.device, trust=tuple(a.trust_module))


def add_eval(sub) -> None:
    """Options of ``flows eval``."""
    e = sub.add_parser("eval", formatter_class=Formatter,
                       help="distance or test between samples and a reference, beside its "
                            "noise floor",
                       description="A metric between samples and a reference, with its noise "
                                   "floor for a named dataset and, with --permutations, the "
                                   "p-value of a permutation two-sample test; or memorization "
                                   "and data copying against the training set. Every metric "
                                   "prints metric, value, floor, floor_std, floor_pairs, "
                                   "p_value, permutations, n_samples, n_reference (null where "
                                   "not applicable) and its own fields.")
    e.add_argument("--samples", required=True, type=Path, help=".npy/.csv samples by rows")
    ref = e.add_mutually_exclusive_group()
    ref.add_argument("--reference", type=Path,
                     help=".npy/.csv reference samples by rows; with --train: held-out points "
                          "never trained on (default: none; --reference or --data is required "
                          "except for --metric memorization)")
    ref.add_argument("--data", help="dataset name as reference, also gives the noise floor "
                                    "(default: none)")
    e.add_argument("--train", type=Path,
                   help="with --metric memorization or copying: .npy/.csv of the whole "
                        "training set (default: none)")
    e.add_argument("--metric", choices=EVAL_METRICS + TRAIN_METRICS + ("all",), default="w2",
                   help="all: every two-sample test that applies to the data (energy, sliced, "
                        "hotelling, precision, recall, variance, bins; classes and fd for "
                        "images; memorization and copying with --train), each with a "
                        "permutation p-value, Holm's correction and one verdict at --alpha "
                        "(the table also goes to stderr); "
                        "distance in data units (sinkhorn: squared units); energy distance; "
                        "ridge Hotelling mean shift; k-NN precision or recall; log variance "
                        "ratio; bins: chi-square of k-means cell counts; classes: "
                        "chi-square of the feature classifier's predicted classes (images); "
                        "memorization: "
                        "fraction of samples whose nearest training point "
                        "is closer than c times the second nearest (see --criterion, "
                        "--null-rate; with --reference also the data-copying p-value); "
                        "copying: the data-copying z of Meehan et al. (needs --train and "
                        "--reference)")
    e.add_argument("--permutations", type=int, default=0,
                   help="random splits of the permutation two-sample test behind p_value "
                        f"(0: no test; 499 resolves p < 0.01; --metric all: 0 means "
                        f"{VERDICT_PERMUTATIONS}, and at least K / alpha - 1 for K tests)")
    e.add_argument("--alpha", type=float, default=VERDICT_ALPHA,
                   help="with --metric all: the family-wise level of the verdict")
    _add_metric_options(e)
    e.add_argument("--floor-pairs", type=int, default=10, dest="floor_pairs",
                   help="independent true-data pairs behind the floor's mean and std (--data)")
    e.add_argument("--seed", type=int, default=0,
                   help="seed of the reference sample, the permutations and of sliced "
                        "projections (>= 0)")
    e.add_argument("--out", type=out_path, help="also write config.json and metrics.json into "
                                                "this run directory (default: only print the "
                                                "JSON)")
    e.set_defaults(func=cmd_eval)


def _add_metric_options(e) -> None:
    """Options of ``flows eval`` that one metric or a few use (each says which)."""
    e.add_argument("--reg", type=float, default=0.05,
                   help="with --metric sinkhorn: regularisation relative to the reference's "
                        "mean squared distance")
    e.add_argument("--max-iter", type=int, default=5000, dest="max_iter",
                   help="with --metric sinkhorn: iterations allowed at the final "
                        "regularisation; a solve that stops short prints converged: false")
    e.add_argument("--k", type=int, default=3,
                   help="with --metric precision, recall or all: the k of the k-NN radii")
    e.add_argument("--cells", type=int, default=3,
                   help="with the data-copying test: k-means cells of the training set")
    e.add_argument("--criterion", default="calibrated",
                   help="with --metric memorization: 'calibrated' or a fixed ratio c in (0, 1) "
                        "(the literature's is 0.3333)")
    e.add_argument("--null-rate", type=float, default=NULL_RATE, dest="null_rate",
                   help="with --metric memorization and --criterion calibrated: the rate at "
                        "which fresh samples of the data are to be flagged, in (0, 1)")


def cmd_eval(a: argparse.Namespace):
    """``flows eval``: :func:`flows.runs.run.run_eval` (with ``--metric all`` also the table on
    stderr)."""
    from ..runs.run import run_eval

    _common(a)
    res = run_eval(a.samples, a.reference, a.data, a.metric, a.seed, a.out, a.train,
                   a.floor_pairs, a.criterion, a.null_rate, permutations=a.permutations,
                   reg=a.reg, max_iter=a.max_iter, k=a.k, cells=a.cells, alpha=a.alpha)
    if a.metric == "all":  # the JSON on stdout, the table for a reader on stderr
        print(res.text(), file=sys.stderr, flush=True)
    return res


def add_experiment(sub) -> None:
    """Options of ``flows experiment width | samples | risk | stopping | ntk-gap |
    memorization``."""
    x = sub.add_parser("experiment", formatter_class=Formatter,
                       help="theory-regime sweeps with figures",
                       description="Theory-regime sweeps over the width m or the number n of "
                                   "training points, excess risk over seeds, memorization.")
    kinds = x.add_subparsers(dest="kind", required=True, metavar="KIND")
    _add_width_experiment(kinds)
    _add_samples_experiment(kinds)
    _add_risk_experiment(kinds)
    add_stopping_kinds(kinds, cmd_experiment)
    _add_memorization_experiment(kinds)


def _add_width_experiment(kinds) -> None:
    """``flows experiment width``."""
    w = kinds.add_parser("width", formatter_class=Formatter,
                         help="loss curves against the infinite-width NTK prediction, drift, "
                              "lambda_0 and W2 against the width m")
    experiment_common(w)
    w.add_argument("--widths", type=ints, default=[256, 1024, 4096, 16384],
                   help="widths m (neurons, comma-separated)")
    w.add_argument("--n", type=int, default=256, help="training points")
    theory_steps(w, "the NTK gap depends on lr x steps, the gradient-flow time; at "
                     "n = 64 it falls with m from 256 to 16384 at lr x steps = 250, not at "
                     "1000")
    add_sweep_arguments(w, without="the runs one after another in this process")
    w.set_defaults(func=cmd_experiment)


def _add_samples_experiment(kinds) -> None:
    """``flows experiment samples``."""
    s = kinds.add_parser("samples", formatter_class=Formatter,
                         help="train and test objective, their excess over the population "
                              "minimum, the gap beside its floor, and W2 with its floor "
                              "against n")
    experiment_common(s)
    s.add_argument("--ns", type=ints, default=[32, 64, 128, 256, 512],
                   help="numbers of training points (comma-separated)")
    s.add_argument("--width", type=int, default=4096, help="width m (neurons)")
    theory_steps(s)
    add_sweep_arguments(s, without="the runs one after another in this process")
    s.set_defaults(func=cmd_experiment)


def _add_risk_experiment(kinds) -> None:
    """``flows experiment risk``."""
    r = kinds.add_parser("risk", formatter_class=Formatter,
                         help="excess test and train risk against n over several seeds, with "
                              "95%% intervals and slopes beside the bound's n^-1/2; the W2 "
                              "bounds beside the measured W2 and W2(source, data), the "
                              "computed generalization bound beside L*, each with its ratio "
                              "and 'vacuous'")
    r.add_argument("--out", required=True, type=out_path, help="run directory (created; locked)")
    r.add_argument("--data", default="moons",
                   help="dataset with a closed-form optimal field: normal, 8gaussians, "
                        "gmm<d>, moons, circles, swissroll, spirals")
    r.add_argument("--ns", type=ints, default=list(RISK_NS),
                   help="numbers of training points (comma-separated, distinct)")
    r.add_argument("--seeds", type=ints, default=list(RISK_SEEDS),
                   help="one run per seed and n (comma-separated, distinct, >= 0); the "
                        "intervals are Student-t over them")
    r.add_argument("--width", type=int, default=1024, help="width m (neurons)")
    theory_steps(r)
    r.add_argument("--n-test", type=int, default=20_000, dest="n_test",
                   help="fresh test draws (points) behind each excess test risk")
    r.add_argument("--n-samples", type=int, default=1000, dest="n_samples",
                   help="generated points for W2, its floor and its bound (0: skip them)")
    add_sweep_arguments(r, without="the runs one after another in this process")
    r.set_defaults(func=cmd_experiment)


def _add_memorization_experiment(kinds) -> None:
    """``flows experiment memorization``."""
    m = kinds.add_parser("memorization", formatter_class=Formatter,
                         help="memorized fraction against n (trained fields and the exact "
                              "empirical-optimal field) and along the reverse process")
    m.add_argument("--out", required=True, type=out_path, help="run directory (created; locked)")
    m.add_argument("--data", default="moons", help="dataset name or .npy/.csv file")
    m.add_argument("--ns", type=ints, default=list(MEMORIZATION_NS),
                   help="numbers of training points (comma-separated, distinct, >= 3)")
    m.add_argument("--width", type=int, default=256, help="width m (neurons), practice regime")
    m.add_argument("--steps", type=int, default=3000, help="Adam steps per training run")
    m.add_argument("--n-samples", type=int, default=1000, dest="n_samples",
                   help="generated points per field")
    m.add_argument("--seed", type=int, default=0, help="seed of every run (>= 0)")
    add_sweep_arguments(m, without="the runs one after another in this process")
    m.set_defaults(func=cmd_experiment)


def cmd_experiment(a: argparse.Namespace):
    """``flows experiment``: one run function of :mod:`flows.runs.run` or
    :mod:`flows.runs.sweeps`."""
    from ..runs.run import run_samples_experiment, run_width_experiment
    from ..runs.sweeps import run_memorization_experiment, run_risk_experiment

    _common(a)
    # with --workers or --scheduler the runs are cells on a Dask cluster (resumable)
    sweep = sweep_options(a) if (a.workers is not None or a.scheduler is not None) else None
    if a.kind == "risk":
        return run_risk_experiment(a.out, a.ns, a.seeds, a.data, a.width, a.k, a.steps, a.lr,
                                   a.n_test, a.n_samples, sweep=sweep)
    if a.kind in STOPPING_KINDS:
        return run_stopping_kind(a, sweep)
    if a.kind == "memorization":
        return run_memorization_experiment(a.out, a.ns, a.data, a.width, a.steps,
                                           a.n_samples, a.seed, sweep=sweep)
    if a.kind == "width":
        return run_width_experiment(a.out, a.widths, a.data, a.n, a.k, a.steps, a.lr, a.seed,
                                    sweep=sweep)
    return run_samples_experiment(a.out, a.ns, a.data, a.width, a.k, a.steps, a.lr, a.seed,
                                  sweep=sweep)


def _common(a: argparse.Namespace) -> None:
    """Options every sub-command shares."""
    set_threads(a.threads, "threads")


def build_parser() -> argparse.ArgumentParser:
    """The ``flows`` parser: the shared options and one sub-parser per command."""
    p = argparse.ArgumentParser(prog="flows", formatter_class=Formatter,
                                description="Flow matching with two-layer ReLU velocity fields: "
                                            "train, sample, evaluate, theory sweeps.")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (1 is fastest for these small products)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (add_train, add_sample, add_eval, add_experiment):
        add(sub)
    return p


#: each command's key numbers, ``(label, dotted path into its metrics)``, printed beneath the
#: line saying what it wrote (:mod:`_runkit.summary`; the first four that the result holds)
HEADLINES = {
    "train": (("W2 to held-out data", "w2_heldout"), ("its floor", "w2_floor"),
              ("final loss", "final_loss"), ("memorized fraction", "memorized_fraction")),
    "sample": (("samples", "n"), ("dimension", "dim"), ("field evaluations", "nfe")),
    "eval": (("value", "value"), ("floor", "floor"), ("value / floor", "floor_ratio"),
             ("p-value", "p_value")),
    "experiment width": (("widths", "widths"), ("NTK gap", "ntk_gap"),
                         ("NTK check passes", "ntk_passes"), ("lambda_0", "lambda_0")),
    "experiment samples": (("n", "ns"), ("excess test risk", "excess_test"), ("W2", "w2"),
                           ("W2 floor", "w2_floor")),
    "experiment risk": (("n", "ns"), ("excess test risk", "excess_test"),
                        ("excess slope (bound -1/2)", "excess_slope"),
                        ("W2 bound holds", "w2_bound_holds_all")),
    "experiment memorization": (("n", "ns"), ("memorized (trained)", "memorized_trained"),
                                ("memorized (empirical optimum)", "memorized_empirical_optimal")),
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``flows`` command; returns the exit code."""
    return cli_main("flows", build_parser(), argv, headlines=HEADLINES)


if __name__ == "__main__":
    sys.exit(main())
