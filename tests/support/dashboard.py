"""The metric names the Grafana dashboard queries, and those a /metrics page exports.

For a cross-check against a running arena::

    from tests.support.dashboard import dashboard_metric_names, exported_metric_names
    missing = dashboard_metric_names() - exported_metric_names(page_text)

(`page_text` being the referee's, workers' and web app's /metrics pages joined
together). A labelled metric that has never been observed still shows its
`# TYPE` line, which is what `exported_metric_names` reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DASHBOARD = Path(__file__).resolve().parents[2] / "k8s" / "monitoring" / "grafana-dashboard.json"

# PromQL words that are not metric names (functions are recognised by their "(").
_KEYWORDS = frozenset(
    {
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "offset",
        "and",
        "or",
        "unless",
        "inf",
        "nan",
    }
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_LABEL_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGES = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_LABEL_VALUES = re.compile(r"label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[,)]")
_IDENT = re.compile(r"(?<![\w$.])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w(])(?!\s*\()")


def load_dashboard(path: Path = DASHBOARD) -> dict[str, Any]:
    """The dashboard JSON."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, rows' nested panels included."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def exprs(dashboard: dict[str, Any]) -> list[str]:
    """Every PromQL expression of the panels' targets."""
    return [
        target["expr"]
        for panel in panels(dashboard)
        for target in panel.get("targets", [])
        if "expr" in target
    ]


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (no functions, labels or keywords)."""
    text = _STRING.sub('""', expr)
    text = _LABEL_MATCHERS.sub(" ", text)
    text = _RANGES.sub(" ", text)
    text = _GROUPING.sub(" ", text)
    return {name for name in _IDENT.findall(text) if name.lower() not in _KEYWORDS}


def variable_metric_names(dashboard: dict[str, Any]) -> set[str]:
    """Metric names used by the template variables' `label_values(metric, label)` queries."""
    names: set[str] = set()
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        if isinstance(query, dict):
            query = query.get("query", "")
        if isinstance(query, str):
            names.update(_LABEL_VALUES.findall(query))
    return names


def dashboard_metric_names(path: Path = DASHBOARD) -> set[str]:
    """Every metric name the dashboard queries (panels and template variables)."""
    dashboard = load_dashboard(path)
    names = variable_metric_names(dashboard)
    for expr in exprs(dashboard):
        names |= metric_names(expr)
    return names


_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("", "_sum", "_count", "_created"),
    "untyped": ("",),
    "unknown": ("",),
    "info": ("_info",),
    "stateset": ("",),
    "gaugehistogram": ("_bucket", "_gsum", "_gcount"),
}


def exported_metric_names(exposition: str) -> set[str]:
    """The sample names a Prometheus text page declares, from its `# TYPE` lines and samples.

    A counter family `arena_moves` declares `arena_moves_total` (and `_created`),
    a histogram its `_bucket`, `_sum` and `_count`.
    """
    names: set[str] = set()
    for line in exposition.splitlines():
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 4:
                family, kind = parts[2], parts[3]
                for suffix in _SUFFIXES.get(kind, ("",)):
                    base = family.removesuffix("_total") if kind == "counter" else family
                    names.add(base + suffix)
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{\s]", line, maxsplit=1)[0])
    return names
