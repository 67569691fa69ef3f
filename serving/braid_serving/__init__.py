"""braid_serving: the Slim Scheduler (greedy per-server batcher + PPO router) over braid.

    from braid_serving.greedy import GreedyScheduler, GreedyConfig      # Algorithm 1, per server
    from braid_serving.router import PPORouter, RandomRouter            # routing across servers
    from braid_serving.cluster_sim import ClusterSim, PAPER_LIKE_CLUSTER  # offline training / bench
    from braid_serving.server import SlimServer                         # a threaded server on braid Sessions

docs/serving.md describes it; bench/slim_serving.py measures it.
"""
