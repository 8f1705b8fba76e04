"""Adapters for agent frameworks (optional extras): LangGraph checkpointer, LangChain history."""
