"""Compatibility layers: the APIs of other tools, on the journal (``stateforge``)."""
