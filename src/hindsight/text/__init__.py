"""Text processing shared by the keyword arm and the built-in embedder."""
