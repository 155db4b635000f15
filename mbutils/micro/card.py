"""``card.md``: a micro-benchmark's reliability card in words, for a person deciding whether to trust it.

The Markdown is built in Python from the numbers of ``card.json`` and ``micro.json`` (no template):
every name that comes from the data (bundle, selector, parameters, tasks) passes :func:`md_text`, which
backslash-escapes Markdown's punctuation, so a name is shown as written and never becomes markup. The
card says what the set is, how it was chosen, its MDAD at the threshold with its interval, what random
sampling of the same size gives, the coverage of its interval measured on held-out models when the
build has them, and, with numbers, what it cannot tell.
"""

from __future__ import annotations

import math
import re

import numpy as np

from mbutils.base.tables import mdad_text, upper_bound_text

#: Characters that make markup inside a line of Markdown (MyST's roles and GFM's tables too).
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]<>|~&$!#])")


def md_text(value) -> str:
    """``value`` as Markdown text that shows it literally (inline markup escaped, white space one blank).

    >>> md_text("gpqa_main [x](y) <b>")
    'gpqa\\_main \\[x\\](y) \\<b\\>'
    """
    return _PUNCTUATION.sub(r"\\\1", " ".join(str(value).split()))


def _points(value, fmt: str = "g") -> str:
    return mdad_text(value, fmt, " points")


def _pct(share) -> str:
    return "unknown" if share is None or not math.isfinite(float(share)) else f"{100 * float(share):.0f}%"


def _chosen(built) -> str:
    params = {k: v for k, v in sorted(built.params.items())}
    shown = ", ".join(f"{md_text(k)} = {md_text(v)}" for k, v in params.items()) or "none"
    pool = len(built.pool)
    excluded = len(built.excluded)
    return (f"- **Chosen by**: selector {md_text(built.selector)} (parameters: {shown}), seed {built.seed}, "
            f"learning from a pool of {pool} models of the bundle"
            + (f" ({excluded} held out with --exclude-models)" if excluded else " (none held out)") + ".\n")


def _choice(card) -> str:
    """How ``--selector auto`` chose, with the numbers that decided it (empty for a named selector)."""
    choice = getattr(card, "choice", None)
    if not choice:
        return ""
    mdads = ", ".join(f"{md_text(name)} {mdad_text(value, '.1f')}" for name, value in choice["mdads"].items())
    return (f"- **How the selector was chosen** (`--selector auto`): {md_text(choice['reason'])} Candidates' MDADs "
            f"at {100 * choice['threshold']:g}% agreement (points, monotone fit, {choice['runs']} runs, seed "
            f"{choice['seed']}): {mdads}.")


def _reliability(card, k: int) -> list[str]:
    threshold = 100 * card.threshold
    if card.protocol is None:
        return [f"No MDAD was computed: {md_text(card.note)}.", ""]
    protocol = card.protocol
    lines = [f"- **MDAD at {threshold:g}% agreement**: {_points(card.mdad)} "
             f"(95% interval {mdad_text(card.ci_low)} to {upper_bound_text(card.ci_high, unit=' points')}), from {protocol['n_runs']} "
             f"runs of the paper's protocol on the pool ({protocol['n_sources']} source and {protocol['n_targets']} "
             "target models per run).",
             f"- **Random sampling of the same {k} items**: MDAD {_points(card.random_mdad)} (the exact planner's "
             "prediction under the same protocol)."]
    if math.isfinite(card.mdad):
        lines.append(f"- **Pairs it separates**: {_pct(card.share_separated)} of the pool's model pairs differ by "
                     f"at least {_points(card.mdad)} on the full benchmark.")
    if card.note:
        lines.append(f"- **Caution**: {md_text(card.note)}.")
    return lines + [""]


def _coverage(built, level: float) -> list[str]:
    coverage = built.card.coverage or {}
    lines = []
    normal = built.interval == "normal"
    if built.interval == "hypergeometric":
        lines.append(f"- The {100 * level:g}% interval of `score` is exact for uniform random sampling (hypergeometric): "
                     "it covers a model's full-benchmark accuracy at least that often, for every accuracy.")
    if normal:
        lines.append(f"- The {100 * level:g}% interval of `score` is a normal interval from the cross-fitted residuals "
                     "of the difference estimator: the estimate plus or minus the normal quantile times the standard "
                     f"deviation the estimator gives a model from the spread of its residuals on the {built.k} items. "
                     "It is approximate (that spread is itself estimated from the k items), so its coverage is "
                     "measured below, not guaranteed.")
    calibration = coverage.get("calibration")
    if calibration:
        own = ", with the variance that micro-benchmark's estimator gives it" if normal else ""
        width = (f", mean width {calibration['width']:.1f} points" if isinstance(calibration.get("width"), (int, float))
                 else "")
        share = _pct(calibration["covered"] / calibration["models"])
        lines.append(f"- Measured on the pool's models, each scored by a micro-benchmark built without it{own} "
                     f"(cross-fitted, {calibration['models']} models): the {100 * level:g}% interval covered "
                     f"{calibration['covered']} of them ({share}){width}.")
    excluded = coverage.get("excluded")
    if excluded:
        scored = "this micro-benchmark" + (" with its variance for each" if normal else "")
        lines.append(f"- Measured on the {excluded['models']} models held out of the build (--exclude-models), scored "
                     f"by {scored}: the {100 * level:g}% interval covered {excluded['covered']} of them "
                     f"({_pct(excluded['covered'] / excluded['models'])}), mean width {excluded['width']:.1f} points.")
    if built.interval != "hypergeometric" and not calibration:
        lines.append("- No coverage was measured: the pool was too small to hold models out.")
    width = coverage.get("width")
    if width is not None and math.isfinite(width):
        typical = ("the median over the held-out models: its width depends on how well the pool predicts the model"
                   if normal else "a model at the pool's median accuracy")
        lines.append(f"- A typical {100 * level:g}% interval ({typical}) is {width:.1f} points wide.")
    return lines + [""]


def _limits(built) -> list[str]:
    card = built.card
    threshold = 100 * card.threshold
    lines = []
    if card.protocol is not None and math.isfinite(card.mdad):
        close = 1 - card.share_separated if card.share_separated is not None and math.isfinite(card.share_separated) \
            else np.nan
        lines.append(f"- Pairs of models closer than {_points(card.mdad)} are ordered correctly less than "
                     f"{threshold:g}% of the time; {_pct(close)} of this pool's pairs are that close, so for them the "
                     "micro-benchmark's order is not evidence of which model is better.")
    elif card.protocol is not None:
        lines.append(f"- At no gap did it order pairs correctly {threshold:g}% of the time in the protocol run (MDAD not "
                     "reached): do not use it to rank models.")
    width = (card.coverage or {}).get("width")
    if width is not None and math.isfinite(width):
        lines.append(f"- A single score is known to about +/- {width / 2:.1f} points (half the typical interval), "
                     "not to the decimal it is printed with.")
    lines += ["- Its numbers hold for models like the pool's, run as the bundle's models were (same prompts, "
              "few-shot setting and metric); a model unlike them, or run another way, may be estimated worse.",
              f"- It estimates accuracy on the {built.items.size} items of the bundle, not on the task the bundle "
              "samples.", ""]
    return lines


def _harness(meta: dict) -> list[str]:
    group = meta.get("lm_eval_group")
    lines = ["## Running it with lm-evaluation-harness", ""]
    if not group:
        note = meta.get("lm_eval_note") or "no export"
        return lines + [f"No harness export: {md_text(note)}. Score models from a bundle-format responses.csv.", ""]
    metric = group["metric"]
    lines += [f"`lm_eval/` holds {len(group['tasks'])} micro task(s), one per harness task, and the group "
              f"{md_text(group['name'])} that runs them all:", "",
              "```bash",
              f"lm_eval --model hf --model_args pretrained=ORG/MODEL --tasks {group['name']} "
              "--include_path THIS_FOLDER/lm_eval --log_samples --output_path runs/",
              "python -m mbutils score THIS_FOLDER runs/",
              "```", "",
              f"- Metric: {md_text(metric)} ("
              + ("the metric the bundle's answers were read from, as its " + md_text(meta.get("lm_eval_source") or "")
                 + " says" if meta.get("lm_eval_metric")
                 else "the default; the bundle does not say which metric its answers were read from")
              + "); `score` reads it unless given --metric.",
              "- " + ("The group's mean is the micro-benchmark's estimate (weight_by_size: "
                      f"{str(group['weight_by_size']).lower()})." if group["exact"] else
                      "The group's mean is only an approximation of the estimate (the estimator weights the items "
                      "or reads more than their mean); `score` computes the estimate and its interval from the "
                      "samples logs."),
              f"- Checked: {md_text(meta.get('lm_eval_check') or 'not checked')}."]
    if group.get("unresolved"):
        installed = not str(meta.get("lm_eval_check") or "").startswith("not checked")
        lines.append(f"- The original config of {md_text(', '.join(group['unresolved']))} was not found, so it "
                     "includes `<task>.yaml` beside it, which is not there: "
                     + ("the installed harness defines no such task; copy or link that task's YAML there, or build "
                        "again with --lm-eval-tasks DIR holding it." if installed else
                        "lm-evaluation-harness was not installed when this folder was built. Install it (pip install "
                        "\"mbutils[harness]\", lm-eval==0.4.13) and build again, so that each micro task "
                        "includes the harness's own configuration, resolved into the folder."))
    return lines + [""]


def _estimate(kind: str) -> str:
    if kind == "hypergeometric":
        return "the plain mean of the items"
    if kind == "normal":
        return ("the cross-fitted difference estimator: predictions on every item from the pool models that answer "
                "the sampled items most like the model (their answers are in `pool_answers.csv`), corrected by the "
                "mean residual on the sample")
    return "the selector's estimator (weights or item parameters stored in this folder)"


def _verdicts(card, kind: str) -> list[str]:
    """What ``score``'s "better / worse than" verdicts did on held-out models, and the shipping rule."""
    held = card.held_out or {}
    lines = []
    raw = held.get("raw_bias")
    if raw is not None and math.isfinite(raw):
        lines.append(f"- Before any correction its estimates were {raw:+.1f} points off on average on held-out pool "
                     "models" + (" (a bias `score` removes: it subtracts that mean error)." if kind == "empirical"
                                 else "."))
    for part, who in (("calibration", "cross-fitted pool models"), ("excluded", "models held out of the build")):
        m = held.get(part)
        if not m or not m.get("models"):
            continue
        made, wrong = int(m["verdicts"]), int(m["false_verdicts"])
        rate = f"{100 * wrong / made:.1f}%" if made else "none made"
        lines.append(f"- On {m['models']} {who}: bias {m['bias']:+.1f} points, RMSE {m['rmse']:.1f}, "
                     f"{100 * m['coverage']:.0f}% of {100 * held['level']:g}% intervals covered; of {made} "
                     f"\"better / worse than\" verdicts at {100 * held['level']:g}%, {wrong} were wrong ({rate}).")
    if held:
        problems = held.get("problems") or []
        lines.append("- The rule for a shipped set (|bias| at most half the interval's half-width, coverage and the "
                     "verdicts' error rate within two binomial standard errors of their levels): "
                     + ("met." if not problems else "not met: " + md_text("; ".join(problems)) + "."))
    return lines + ([""] if lines else [])


def card_markdown(built, meta: dict, level: float = 0.9) -> str:
    """The text of ``card.md`` for ``built`` (a BuiltMicro) and the ``micro.json`` record ``meta``."""
    n_items, k = len(built.items), built.k
    subtasks = len(set(map(str, built.subtasks)))
    lines = [f"# Micro-benchmark of {md_text(built.bundle)}: {k} of {n_items} items", "",
             "## What it is", "",
             f"- **Items**: {k} of the {n_items} items of bundle {md_text(built.bundle)} ({subtasks} subtask"
             f"{'s' if subtasks != 1 else ''}), listed with their weights in items.csv.",
             _chosen(built).rstrip("\n"),
             *([_choice(built.card)] if _choice(built.card) else []),
             f"- **Estimate**: " + _estimate(built.interval)
             + "; run `python -m mbutils score` on a new model's results.", "",
             "## How reliable it is", ""]
    lines += _reliability(built.card, k)
    lines += ["## Its interval on held-out models", ""] + _coverage(built, level)
    verdicts = _verdicts(built.card, built.interval)
    if verdicts:
        lines += ["## Its verdicts on held-out models", ""] + verdicts
    lines += ["## What it cannot tell", ""] + _limits(built)
    lines += _harness(meta)
    return "\n".join(lines).rstrip("\n") + "\n"
