"""Slim Scheduler on Ray Serve: a braid node replica per (node, device), the router as ingress.

    ray.init(address="auto")                               # any Ray cluster, or a local one (local_cluster)
    app = build_app([NodeSpec("node0", "cpu"), NodeSpec("node1", "vgpu")], router="least-loaded")
    handle = serve.run(app, name="slim")
    logits, widths, node = handle.infer.remote(image).result()

Each NodeReplica deployment is a SlimServer (the greedy scheduler of
Algorithm 1 over braid segment Sessions) pinned to its node by a custom Ray
resource named after the node (`{"slim-node0": 1}`), so the same app runs on a
real multi-node cluster whose nodes advertise those resources (`ray start
--resources '{"slim-node0": 1}'`) and on one machine through local_cluster().
The SlimIngress deployment runs the router (random / round-robin / least-loaded
/ a saved PPO router) over Serve handles to the node replicas: a bounded FIFO
("overloaded" when full), blocks of the router's group size, and a request whose
replica dies is retried on another node or fails with the error, counted.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .greedy import GreedyConfig
from .router import ServerStats

try:  # ray is optional: the rest of braid_serving never needs it
    from ray import serve
except ImportError:  # pragma: no cover
    serve = None


@dataclasses.dataclass(frozen=True)
class NodeSpec:
    node: str  # a Ray node, by its custom resource "slim-<node>"
    device: str  # a key of backend.DEVICE_SHAPES: cpu, vgpu, vgpu-orin-slow

    @property
    def name(self) -> str:
        return f"{self.node}-{self.device}"

    @property
    def resource(self) -> str:
        return f"slim-{self.node}"


class NodeReplica:
    """A braid node: SlimServer over BraidBackend for one device shape."""

    def __init__(self, name: str, device: str, model: str, config: dict[str, Any]) -> None:
        import braid

        from .backend import DEVICE_SHAPES, BraidBackend
        from .server import SlimServer

        self.server = SlimServer(BraidBackend(braid.SlimmableModel(model), DEVICE_SHAPES[device]),
                                 GreedyConfig(**config), workers=1, name=name)  # fmt: skip

    async def infer(self, image: np.ndarray, widths: tuple[float, ...]) -> np.ndarray:
        import asyncio

        return await asyncio.wrap_future(self.server.submit(image, widths))

    def stats(self) -> dict[str, Any]:
        return dataclasses.asdict(self.server.stats())

    def counters(self) -> dict[str, int]:
        return dataclasses.asdict(self.server.counters)


class _HandleNode:
    """NodeLike over a Serve handle: answers land on a thread pool; stats are polled, queue counted here."""

    def __init__(self, name: str, handle: Any, pool: concurrent.futures.ThreadPoolExecutor, timeout: float) -> None:
        self.name = name
        self.handle = handle
        self.pool = pool
        self.timeout = timeout
        self._lock = threading.Lock()
        self._outstanding = 0
        self._stats = ServerStats(0, 0.0, 0.0)
        self._polled = 0.0

    def submit(self, image: np.ndarray, widths: Sequence[float]) -> concurrent.futures.Future[np.ndarray]:
        response = self.handle.infer.remote(image, tuple(widths))
        with self._lock:
            self._outstanding += 1

        def wait() -> np.ndarray:
            try:
                return response.result(timeout_s=self.timeout)
            except Exception as e:  # noqa: BLE001  (a dead replica: a clear error for the retry path)
                raise RuntimeError(f"node {self.name}: {type(e).__name__}: {e}") from e
            finally:
                with self._lock:
                    self._outstanding -= 1

        return self.pool.submit(wait)

    def stats(self) -> ServerStats:
        now = time.monotonic()
        if now - self._polled > 0.1:  # power and utilisation from the replica, at most 10 times a second
            self._polled = now
            try:
                self._stats = ServerStats(**self.handle.stats.remote().result(timeout_s=2.0))
            except Exception:  # noqa: BLE001  (keep the last sample; failures show up on requests)
                pass
        with self._lock:
            # The replica's room as of the poll, less what was sent since (counted here).
            s = self._stats
            room = -1 if s.room < 0 else max(0, s.room + s.queue - self._outstanding)
            return dataclasses.replace(s, queue=self._outstanding, room=room)


class SlimIngress:
    """The router over the node replicas (server.Cluster)."""

    def __init__(self, names: list[str], router: str, fifo_capacity: int, timeout: float, *handles: Any) -> None:
        from .router import UNIFORM, LeastLoadedRouter, PPORouter, RandomRouter, RoundRobinRouter
        from .server import Cluster

        self.pool = concurrent.futures.ThreadPoolExecutor(64, thread_name_prefix="slim-ingress")
        nodes = [_HandleNode(n, h, self.pool, timeout) for n, h in zip(names, handles)]
        if router.endswith(".npz"):
            r: Any = PPORouter.load(router)
            r.training = False
        else:
            kind, _, width = router.partition("@")
            widths = UNIFORM[float(width)] if width else None
            table = {"random": RandomRouter, "round-robin": RoundRobinRouter, "least-loaded": LeastLoadedRouter}
            if kind not in table:
                raise ValueError(f"router must be random, round-robin, least-loaded (optionally @WIDTH) or a .npz, got {router!r}")
            r = table[kind](widths, 4, 0)
        self.cluster = Cluster(nodes, r, fifo_capacity=fifo_capacity, retries=2)

    async def infer(self, image: np.ndarray) -> tuple[np.ndarray, tuple[float, ...], int]:
        import asyncio

        return await asyncio.wrap_future(self.cluster.submit(image))  # OverloadedError when the FIFO is full

    def counters(self) -> dict[str, int]:
        return dataclasses.asdict(self.cluster.counters)


def build_app(nodes: Sequence[NodeSpec], router: str = "least-loaded", model: str = "builtin:slim_resnet",
              config: GreedyConfig | None = None, fifo_capacity: int = 256, timeout: float = 60.0) -> Any:  # fmt: skip
    """The Serve application: one NodeReplica deployment per NodeSpec, SlimIngress on top."""
    if serve is None:
        raise ImportError("ray[serve] is not installed: pip install 'ray[serve]'")
    cfg = dataclasses.asdict(config or GreedyConfig(b_max=8, t_idle=5.0, max_queue=256, m_max_bytes=64 << 20))
    cfg["widths"] = tuple(cfg["widths"])
    bound = []
    for spec in nodes:
        dep = serve.deployment(NodeReplica, name=spec.name, num_replicas=1, max_ongoing_requests=512,
                               ray_actor_options={"num_cpus": 0, "resources": {spec.resource: 0.01}})  # fmt: skip
        bound.append(dep.bind(spec.name, spec.device, model, cfg))
    ingress = serve.deployment(SlimIngress, name="slim-ingress", max_ongoing_requests=1024,
                               ray_actor_options={"num_cpus": 0})  # fmt: skip
    return ingress.bind([s.name for s in nodes], router, fifo_capacity, timeout, *bound)


def worker_env() -> dict[str, Any]:
    """A runtime_env whose workers import this braid_serving and this braid (absolute paths)."""
    import os

    import braid

    paths = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
             os.path.dirname(os.path.dirname(os.path.abspath(braid.__file__)))]  # fmt: skip
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in paths)}}


def local_cluster(nodes: Sequence[str]) -> Any:
    """A local Ray cluster with one simulated Ray node per name (ray.cluster_utils), connected to."""
    import ray
    from ray.cluster_utils import Cluster as RayCluster

    cluster = RayCluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {f"slim-{nodes[0]}": 1}})
    for name in nodes[1:]:
        cluster.add_node(num_cpus=1, resources={f"slim-{name}": 1})
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False, runtime_env=worker_env())
    cluster.wait_for_nodes()
    return cluster


def kill_replica(deployment: str, app: str = "slim") -> str:
    """Kill a deployment's replica actor (a fault: Serve starts a new one). Returns its actor name."""
    import ray

    names = []
    for actor in ray.util.list_named_actors(all_namespaces=True):
        name, namespace = (actor["name"], actor["namespace"]) if isinstance(actor, dict) else (actor, "serve")
        names.append(name)
        if name.startswith(f"SERVE_REPLICA::{app}#{deployment}#"):
            ray.kill(ray.get_actor(name, namespace=namespace), no_restart=True)
            return name
    raise LookupError(f"no replica of {app}#{deployment} is running (actors: {names})")
