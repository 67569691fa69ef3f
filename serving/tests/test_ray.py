"""End to end on a local Ray cluster: 3 simulated Ray nodes, braid replicas per (node, device),
the router as Serve ingress, a replica killed under load."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="ray[serve] is not installed (scripts/check_serving.sh installs it)")
serve = pytest.importorskip("ray.serve", reason="ray[serve] is not installed")
pytest.importorskip("braid", reason="braid is not importable (PYTHONPATH=build/python or the wheel)")

from braid_serving.ray_app import NodeSpec, build_app, kill_replica, local_cluster  # noqa: E402

NODES = [NodeSpec("node0", "cpu"), NodeSpec("node1", "vgpu"), NodeSpec("node2", "vgpu-orin-slow")]


@pytest.fixture(scope="module")
def slim_app():  # type: ignore[no-untyped-def]
    cluster = local_cluster([n.node for n in NODES])
    try:
        handle = serve.run(build_app(NODES, router="round-robin"), name="slim", route_prefix=None)
        yield handle
    finally:
        serve.shutdown()
        ray.shutdown()
        cluster.shutdown()


def test_requests_run_on_every_node_and_a_killed_replica_loses_nothing(slim_app) -> None:  # type: ignore[no-untyped-def]
    handle = slim_app
    rng = np.random.default_rng(0)
    logits, widths, node = handle.infer.remote(rng.standard_normal((3, 32, 32)).astype(np.float32)).result()
    assert logits.shape == (100,) and len(widths) == 4 and 0 <= node < 3

    n = 60
    pool = concurrent.futures.ThreadPoolExecutor(16)
    responses = []

    def send(i: int):  # type: ignore[no-untyped-def]
        image = np.random.default_rng(i).standard_normal((3, 32, 32)).astype(np.float32)
        return handle.infer.remote(image).result(timeout_s=120)

    killed: list[str] = []
    killer = threading.Timer(0.5, lambda: killed.append(kill_replica(NODES[1].name)))
    killer.start()
    for i in range(n):
        responses.append(pool.submit(send, i))
        time.sleep(0.02)
    done, errors = 0, []
    nodes_used = set()
    for f in responses:
        try:
            _, _, node = f.result(timeout=180)
            done += 1
            nodes_used.add(node)
        except Exception as e:  # noqa: BLE001
            errors.append(str(e))
    killer.join()
    assert killed, "the replica was not killed"
    counters = handle.counters.remote().result()
    # Every accepted request completed or failed with a clear error, counted by the ingress.
    assert counters["accepted"] == n + 1 == counters["completed"] + counters["failed"]
    assert done == n - len(errors) and counters["failed"] == len(errors)
    assert all("node" in e for e in errors), errors
    assert done >= n // 2 and len(nodes_used) >= 2
    print(f"ray e2e: killed {killed[0]}; {done}/{n} completed, {len(errors)} failed, {counters['retried']} retried, nodes {sorted(nodes_used)}")
