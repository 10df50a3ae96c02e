/**
 * The Swarm backend's defaults, apart from the backend itself: the daemon's flags name them in
 * their help, and every CLI command loads the flags' declarations.
 */
export const DEFAULT_SWARM_SUBNET = '172.31.0.0/16';
export const DEFAULT_REGISTRY = '127.0.0.1:5000';
