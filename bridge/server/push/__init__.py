"""Push notifications: the webhook URL policy, the config store, and delivery."""
