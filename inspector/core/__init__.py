"""The inspector's core: model, loaders, token accounting, compaction, prompt assembly, agent loop. No UI here."""
