"""Schedule: KubeSchedulerConfiguration, a multi-profile framework over one cache and one queue, plugins."""
