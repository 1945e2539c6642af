"""Target networks shared by the off-policy learners."""


def update_target(target_network, online_network, rate=1.0):
    """target <- rate * online + (1 - rate) * target, variable by variable: rate 1 copies (DQN's
    periodic sync), a small rate follows slowly (NAF's and DDPG's soft updates)."""
    for target, online in zip(target_network.variables, online_network.variables):
        target.assign(online if rate == 1.0 else rate * online + (1.0 - rate) * target)
