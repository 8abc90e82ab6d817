"""The Kubernetes deployment (k8s/): Prometheus's scrape and the Grafana dashboard.

The scrape reads the pods' annotations, and the dashboard charts exactly the
metrics the processes export. Without kubectl or PyYAML the tests that render
are skipped, unless ARENA_REQUIRE_SERVICES=1, where they fail.
"""

from __future__ import annotations

import json
import re

from tests.support.dashboard import (
    dashboard_metric_names,
    exported_metric_names,
    exprs,
    load_dashboard,
    metric_names,
    panels,
)
from tests.support.k8s import K8S, Doc, _yaml, find

# Every sample name the dashboard may query, one per metric the arena exports
# (a counter's _total, a gauge, a histogram's _bucket for histogram_quantile).
DASHBOARD_METRICS = frozenset(
    {
        # referee (referee/metrics.py)
        "arena_bots_connected",
        "arena_matches_running",
        "arena_matches_finished_total",
        "arena_moves_total",
        "arena_move_latency_seconds_bucket",
        "arena_move_timeouts_total",
        "arena_illegal_moves_total",
        "arena_forfeits_total",
        "arena_bot_disconnects_total",
        # referee replicas: the relay, placement, the registry, draining
        "arena_relayed_requests_total",
        "arena_relay_added_latency_seconds_bucket",
        "arena_match_placements_total",
        "arena_referee_replicas",
        "arena_referee_draining",
        # workers (workers/metrics.py)
        "arena_worker_tasks_total",
        "arena_worker_task_failures_total",
        "arena_worker_task_duration_seconds_bucket",
        "arena_matches_recorded_total",
        "arena_rating_updates_total",
        "arena_tournaments_finished_total",
        # web (ladder/web/metrics.py)
        "arena_web_requests_total",
        "arena_web_request_duration_seconds_bucket",
    }
)


# monitoring -------------------------------------------------------------------


def test_prometheus_scrape_config_reads_the_pod_annotations() -> None:
    scrape = _yaml().safe_load((K8S / "monitoring" / "prometheus.yml").read_text())
    (job,) = scrape["scrape_configs"]
    assert job["kubernetes_sd_configs"] == [{"role": "pod"}]
    sources = {label for rule in job["relabel_configs"] for label in rule["source_labels"]}
    for annotation in ("scrape", "port", "path"):
        assert f"__meta_kubernetes_pod_annotation_prometheus_io_{annotation}" in sources
    assert "__meta_kubernetes_pod_label_app_kubernetes_io_part_of" in sources
    targets = {rule.get("target_label") for rule in job["relabel_configs"]}
    assert {"__address__", "__metrics_path__", "namespace", "pod"} <= targets


def test_monitoring_config_maps_are_rendered(rendered: dict[str, list[Doc]]) -> None:
    dashboard = find(rendered["prod"], "ConfigMap", "arena-grafana-dashboard")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(dashboard["data"]["card-arena.json"]) == load_dashboard()
    scrape = find(rendered["prod"], "ConfigMap", "arena-prometheus-scrape")
    assert scrape["data"]["prometheus.yml"] == (K8S / "monitoring" / "prometheus.yml").read_text()


def test_dashboard_panels_query_known_metrics() -> None:
    dashboard = load_dashboard()
    assert dashboard["uid"] == "card-arena"
    ids = [panel["id"] for panel in panels(dashboard)]
    assert len(ids) == len(set(ids))
    for panel in panels(dashboard):
        if panel["type"] == "row":
            continue
        assert panel["targets"], panel["title"]
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for target in panel["targets"]:
            names = metric_names(target["expr"])
            assert names, (panel["title"], target["expr"])
            assert names <= DASHBOARD_METRICS, (panel["title"], names - DASHBOARD_METRICS)
            assert '{namespace=~"$namespace"}' in target["expr"], target["expr"]
    assert dashboard_metric_names() <= DASHBOARD_METRICS


def test_dashboard_has_a_panel_for_every_metric() -> None:
    queried = set().union(*(metric_names(expr) for expr in exprs(load_dashboard())))
    assert queried == DASHBOARD_METRICS, DASHBOARD_METRICS - queried


def test_histograms_are_charted_as_p50_and_p99() -> None:
    quantiles: dict[str, set[str]] = {}
    for expr in exprs(load_dashboard()):
        for q, name in re.findall(r"histogram_quantile\((0\.\d+),.*?(\w+_bucket)", expr):
            quantiles.setdefault(name, set()).add(q)
    buckets = {name for name in DASHBOARD_METRICS if name.endswith("_bucket")}
    assert quantiles == {name: {"0.5", "0.99"} for name in buckets}


def _exported_by_the_code() -> set[str]:
    """The chartable sample name of every metric the referee, workers and web app register."""
    from prometheus_client import CollectorRegistry

    from ladder.web.metrics import WebMetrics
    from referee.metrics import RefereeMetrics
    from workers.metrics import WorkerMetrics

    registries: list[CollectorRegistry] = [
        RefereeMetrics.create().registry,
        WorkerMetrics().registry,
        WebMetrics.create().registry,
    ]
    chartable = {"counter": "_total", "gauge": "", "histogram": "_bucket"}
    names = set()
    for registry in registries:
        for family in registry.collect():
            names.add(family.name + chartable[family.type])
    return names


def test_the_metric_list_is_what_the_code_exports() -> None:
    assert _exported_by_the_code() == DASHBOARD_METRICS


def test_an_arena_exposes_every_metric_the_dashboard_queries() -> None:
    """The cross-check the lead runs against live pods, here on fresh registries."""
    from prometheus_client import generate_latest

    from ladder.web.metrics import WebMetrics
    from referee.metrics import RefereeMetrics
    from workers.metrics import WorkerMetrics

    pages = "\n".join(
        generate_latest(registry).decode()  # no sample observed: # TYPE lines only
        for registry in (
            RefereeMetrics.create().registry,
            WorkerMetrics().registry,
            WebMetrics.create().registry,
        )
    )
    assert dashboard_metric_names() <= exported_metric_names(pages)
