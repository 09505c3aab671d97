"""The other callers' dialects on top of trpc's: trpc-agent-python, Google ADK and plain A2A
(encodings registered on the seam), how a caller is detected, and the rewrites that let the
trpc decoder read any of them."""
