"""The methods layer: the protocol, the selectors and the experiment engine."""
