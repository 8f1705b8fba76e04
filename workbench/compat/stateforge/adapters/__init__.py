"""Framework adapters on a ``StateForge`` store: ``langchain.StateForgeMessageHistory`` and
``langgraph.StateForgeCheckpointer`` (each needs its extra: ``lithify-workbench[langchain]``,
``[langgraph]``)."""
