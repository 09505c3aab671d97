"""The A2A door: a2a-sdk's request handler and the screens in front of its JSON-RPC
(0.3 and 1.0), REST and gRPC transports; the call context each transport gives the runner;
the agent card and its routes; the push-notification config methods."""
